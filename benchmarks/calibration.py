"""Calibrated probabilities of the linear S3VMs against scikit-learn's calibration of a supervised LinearSVC.

Rows: on each data set and label draw, the test-set Brier score (halved sum of squares over the classes,
sklearn's ``brier_score_loss`` for two), the expected calibration error (ECE: 10 equal-width bins of the
top-class confidence, the gap between confidence and accuracy weighted by the share of rows in the bin), the
accuracy, whether the wrapper fell back to its calibrated supervised model (``fell_back_``) and the two
cross-validated Brier scores on the held-out labels that decided it (``fallback_scores_``), of

* ``SemiSupervisedCalibratedClassifierCV(TransductiveSVC(), cv=3)``: the estimators' defaults (the TSVM's
  ``safeguard="auto"``, the wrapper's ``fallback="auto"`` and ``ensemble=False``), what users run;
* the same around ``TransductiveSVC(safeguard=None)``, the setting of the first measurement (one fit per
  fold), where the wrapper's own check is the only guard;
* ``CalibratedClassifierCV(LinearSVC(), cv=3)`` fitted on the labeled rows only (what one has without the
  unlabeled rows);
* ``CalibratedClassifierCV(LinearSVC(), cv=3)`` fitted on every training row with its true label (a
  reference no semi-supervised method should beat; pcmac ships no labels for its unlabeled rows, so n/a).

Data: ``load_pcmac()`` (its own split and 50 labeled rows, one draw), breast_cancer and the UCI wheat-seeds
table (three classes, ``../shared/data/tabular/`` through ``_user_data.py``), both standardised, and digits
3 vs 8 (scaled to [0, 1]), each split 70/30 with 10% of the training rows labeled (stratified), three
draws. DeterministicAnnealingSVC and ``ensemble=True`` of the first measurement are left out to keep the
run within about 15 CPU minutes.

Run: ``python benchmarks/calibration.py`` (writes ``benchmarks/results/calibration.md``).
"""

import argparse
import time
import warnings

import numpy as np
from _harness import provenance
from _results import RESULTS_DIR, ResultsFile
from _user_data import load_tabular
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from skssl.calibration import SemiSupervisedCalibratedClassifierCV
from skssl.datasets import load_pcmac, make_semi_supervised
from skssl.svm import TransductiveSVC

DRAWS = (0, 1, 2)


def brier(y_true, proba, classes):
    """Multi-class Brier score (mean over rows of the squared distance to the one-hot truth), halved so that two
    classes give sklearn's binary ``brier_score_loss``."""
    onehot = (np.asarray(y_true)[:, None] == classes[None, :]).astype(float)
    return float(((proba - onehot) ** 2).sum(axis=1).mean() / 2)


def ece(y_true, proba, classes, n_bins=10):
    """Expected calibration error of the top-class confidence over ``n_bins`` equal-width bins."""
    confidence = proba.max(axis=1)
    correct = classes[proba.argmax(axis=1)] == np.asarray(y_true)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        rows = bins == b
        if rows.any():
            total += rows.mean() * abs(confidence[rows].mean() - correct[rows].mean())
    return float(total)


def problems():
    """``(name, draw, X_train, y_semi, y_train or None, X_test, y_test)`` for every data set and draw."""
    pcmac = load_pcmac()
    yield "pcmac (50 labels)", "-", pcmac.X_train, pcmac.y_train, None, pcmac.X_test, pcmac.y_test
    cancer_X, cancer_y = load_breast_cancer(return_X_y=True)
    digits_X, digits_y = load_digits(return_X_y=True)
    keep = np.isin(digits_y, (3, 8))
    wheat = load_tabular("wheat-seeds")
    sets = (
        ("breast_cancer", cancer_X, cancer_y),
        ("digits 3 vs 8", digits_X[keep] / 16.0, digits_y[keep]),
        ("wheat-seeds", wheat.X.to_numpy(dtype=float), wheat.y),
    )
    for name, X, y in sets:
        for draw in DRAWS:
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=draw)
            if name != "digits 3 vs 8":
                scaler = StandardScaler().fit(X_tr)
                X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
            y_semi = make_semi_supervised(y_tr, 0.1, random_state=draw)
            yield name, str(draw), X_tr, y_semi, y_tr, X_te, y_te


def models():
    yield "SSCalibratedCV(TransductiveSVC()), defaults", "semi", SemiSupervisedCalibratedClassifierCV(cv=3)
    model = SemiSupervisedCalibratedClassifierCV(TransductiveSVC(safeguard=None), cv=3)
    yield "SSCalibratedCV(TransductiveSVC(safeguard=None))", "semi", model
    yield "CalibratedCV(LinearSVC), labeled rows", "labeled", CalibratedClassifierCV(LinearSVC(), cv=3)
    yield "CalibratedCV(LinearSVC), all rows labeled", "full", CalibratedClassifierCV(LinearSVC(), cv=3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="where to write the table (default: results/calibration.md)")
    args = parser.parse_args(argv)
    results = ResultsFile(RESULTS_DIR / "calibration.md", args.out)
    lines = [
        "# Calibrated probabilities with unlabeled rows",
        "",
        provenance(argv),
        "",
        "Test-set Brier score (lower is better), ECE over 10 bins (lower is better) and accuracy. Sigmoid",
        "calibration, `cv=3`, 10% of the training rows labeled; `fell back`: the wrapper kept its calibrated",
        "supervised `LinearL2SVC` (its cross-validated Brier score on the held-out labels was lower); `CV Brier`:",
        "those two scores (`fallback_scores_`, the supervised model's first).",
        "",
        "| data | draw | model | Brier | ECE | accuracy | fell back | CV Brier | fit s |",
        "|---|---|---|---:|---:|---:|---|---|---:|",
    ]
    start = time.perf_counter()
    for name, draw, X_tr, y_semi, y_tr, X_te, y_te in problems():
        labeled = y_semi != -1
        for model_name, kind, model in models():
            if kind == "full" and y_tr is None:
                lines.append(f"| {name} | {draw} | {model_name} | n/a | n/a | n/a | | | |")
                continue
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the S3VMs' notes on capped iterations
                if kind == "semi":
                    model.fit(X_tr, y_semi)
                elif kind == "labeled":
                    model.fit(X_tr[labeled], y_semi[labeled])
                else:
                    model.fit(X_tr, y_tr)
            seconds = time.perf_counter() - t0
            proba = model.predict_proba(X_te)
            classes = model.classes_
            accuracy = accuracy_score(y_te, classes[proba.argmax(axis=1)])
            fell_back = {None: "", True: "yes", False: "no"}[getattr(model, "fell_back_", None)]
            scores = getattr(model, "fallback_scores_", None)
            cv_brier = "" if scores is None else " / ".join(f"{v:.4f}" for v in scores)
            lines.append(
                f"| {name} | {draw} | {model_name} | {brier(y_te, proba, classes):.4f} | "
                f"{ece(y_te, proba, classes):.4f} | {accuracy:.3f} | {fell_back} | {cv_brier} | {seconds:.1f} |"
            )
            print(lines[-1], flush=True)
            results.save_progress("\n".join(lines) + "\n")
    lines += ["", f"Total run time: {time.perf_counter() - start:.0f} s.", ""]
    results.finish("\n".join(lines))


if __name__ == "__main__":
    main()
