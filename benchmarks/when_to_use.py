"""The measured cases behind the user guide's "When to use which" page.

Sections (each can be run alone with ``--only``):

* ``pcmac``: the built-in pcmac task (50 labels), supervised ``LinearL2SVC`` against ``TransductiveSVC`` and
  ``DeterministicAnnealingSVC`` with ``positive_fraction`` left to its default (estimated from the labeled
  rows) and set to 0.5;
* ``20ng``: 20 Newsgroups "comp.* + sci.* vs the rest" (the linear benchmarks' protocol), 100 labels (seed 0),
  the S3VMs with the default ``positive_fraction`` and with the true one;
* ``digits``: scikit-learn's digits, standardized, 50 labels, seeds 0-2, defaults: a case where the S3VMs'
  low-density assumption does not hold;
* ``tuning``: ``alpha`` and ``unlabeled_weight`` chosen by ``GridSearchCV`` with ``SemiSupervisedKFold`` on
  pcmac and on digits;
* ``cv``: plain ``cross_val_score`` against ``SemiSupervisedKFold`` on pcmac, for the default scoring,
  ``"accuracy"`` and ``"f1"``.

Run with one thread (the CPU is shared)::

    OMP_NUM_THREADS=1 python benchmarks/when_to_use.py [--only pcmac 20ng digits tuning cv] [--out FILE]

``--out`` writes elsewhere than the committed ``results/when_to_use.md`` (to check a figure without
replacing it).
"""

import argparse
import warnings

import numpy as np
from _harness import (
    RESULTS_DIR,
    ResultsFile,
    add_allow_dirty,
    finish_sections,
    markdown_table,
    provenance,
    sections_text,
    timed,
)
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.preprocessing import StandardScaler

from skssl.datasets import (
    load_newsgroups_binary,
    load_pcmac,
    make_semi_supervised,
    newsgroups_labeled_subset,
)
from skssl.model_selection import SemiSupervisedKFold
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm.defaults._cluster_fractions import fractions_from_clusters  # to say which fraction the default takes

RESULTS = RESULTS_DIR / "when_to_use.md"
SEEDS = (0, 1, 2)


def compare(tag, estimators, splits):
    """Fit and score every estimator on every split (one split after the other): ``(name, accuracies, CPU s)`` rows."""
    results = {name: ([], []) for name in estimators}
    for split_name, (X, y_semi, X_test, y_test) in splits:
        for name, est in estimators.items():
            fitted = clone(est)
            with timed() as t:
                fitted.fit(X, y_semi)
            results[name][0].append(fitted.score(X_test, y_test))
            results[name][1].append(t.cpu)
            print(tag, split_name, name, f"{results[name][0][-1]:.4f}", flush=True)
    return [(name, accs, secs) for name, (accs, secs) in results.items()]


def table(title, note, rows):
    """A section: title, note and one row per estimator (accuracy over the seeds, CPU seconds per fit)."""
    cells = []
    for name, accs, secs in rows:
        accs = np.asarray(accs)
        acc = f"{accs.mean():.1%}"
        if accs.size > 1:
            acc += f" ± {accs.std():.1%} ({', '.join(f'{a:.1%}' for a in accs)})"
        cells.append([name, acc, f"{np.mean(secs):.2f}"])
    return f"### {title}\n\n{note}\n\n" + markdown_table(["estimator", "test accuracy", "CPU s (per fit)"], cells)


def candidates(fraction=None, label=None):
    """``LinearL2SVC`` on the labeled rows, then TSVM and DA with their defaults and, given ``fraction``, with
    ``positive_fraction`` set to it (``label`` in the table)."""
    out = {"LinearL2SVC (labeled rows only)": LinearL2SVC()}
    for cls in (TransductiveSVC, DeterministicAnnealingSVC):
        out[f"{cls.__name__}()"] = cls()
        if fraction is not None:
            out[f"{cls.__name__}(positive_fraction={label})"] = cls(positive_fraction=fraction)
    return out


def svmlin_run(cls, fraction, label):
    """``cls`` set as SVMlin's reference run (``-W 0.001``, no safeguard), named by its parameters."""
    name = f"{cls.__name__}(alpha=1e-3, positive_fraction={label}, safeguard=None)"
    return {name: cls(alpha=1e-3, positive_fraction=fraction, safeguard=None)}


def section_pcmac():
    data = load_pcmac()
    estimators = candidates(0.5, "0.5")
    for cls in (TransductiveSVC, DeterministicAnnealingSVC):
        estimators.update(svmlin_run(cls, 0.5, "0.5"))
    rows = compare("pcmac", estimators, [("", (data.X_train, data.y_train, data.X_test, data.y_test))])
    labeled = data.y_train[data.y_train != -1]
    supervised_alpha = LinearL2SVC().fit(data.X_train, data.y_train).alpha_
    semi_alpha = TransductiveSVC(safeguard=None).fit(data.X_train, data.y_train).alpha_
    said = np.bincount(labeled, minlength=2) / labeled.shape[0]
    clusters = fractions_from_clusters(data.X_train, data.y_train, data.y_train != -1, said)
    note = (
        f"`load_pcmac()`: 1,460 training rows, 50 labeled ({int((labeled == 1).sum())} of class 1: the labels "
        f"say {said[1]:.2f}; with positive_fraction=None the estimators take the clusters' {clusters[1]:.3f}, "
        "skssl.svm.defaults._cluster_fractions), 486 test rows (242 of class 1). Defaults unless "
        f"given: alpha='auto' (here alpha_ = {supervised_alpha:.3g} for LinearL2SVC, {semi_alpha:.3g} for the "
        "semi-supervised estimators, which count the unlabeled rows too) and safeguard='agreement'; the last two "
        "rows are SVMlin's reference run (-W 0.001 -R 0.5, no safeguard)."
    )
    return table("pcmac: sparse text, 50 labels", note, rows)


def section_20ng():
    ng = load_newsgroups_binary()
    n_labeled, seed = 100, 0
    y_semi, r = newsgroups_labeled_subset(ng.y_train, n_labeled, seed)
    estimators = {**candidates(r, f"r={r:.3f}"), **svmlin_run(TransductiveSVC, r, f"r={r:.3f}")}
    rows = compare("20ng", estimators, [(f"{n_labeled} {seed}", (ng.X_train, y_semi, ng.X_test, ng.y_test))])
    labeled = y_semi[y_semi != -1]
    note = (
        f"`load_newsgroups_binary()`: {ng.X_train.shape[0]} x {ng.X_train.shape[1]} TF-IDF (sparse), "
        f"{n_labeled} labels drawn by `newsgroups_labeled_subset(y, {n_labeled}, {seed})` "
        f"({np.mean(labeled == 1):.2f} of them positive; r = {r:.3f} is the true positive fraction of the "
        "unlabeled rows); defaults unless given (alpha='auto', safeguard='agreement')."
    )
    return table(f"20 Newsgroups comp+sci vs rest, {n_labeled} labels, seed {seed}", note, rows)


def digits_split(seed):
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    y_semi = make_semi_supervised(y_train, 50, random_state=seed)
    return scaler.transform(X_train), y_semi, scaler.transform(X_test), y_test


def section_digits():
    rows = compare("digits", candidates(), ((seed, digits_split(seed)) for seed in SEEDS))
    note = (
        "`load_digits()`, 70/30 stratified split (random_state=0), `StandardScaler` fitted on the training rows, "
        "50 labels by `make_semi_supervised(y_train, 50, random_state=seed)`, seeds "
        f"{list(SEEDS)}; 10 classes (one-vs-rest); defaults everywhere."
    )
    return table("digits: dense, standardized, 10 classes, 50 labels", note, rows)


def section_tuning():
    grid = {"alpha": [1e-3, 1e-2, 1e-1], "unlabeled_weight": [0.01, 0.1, 1.0]}
    rows = []
    data = load_pcmac()
    cases = [("pcmac", TransductiveSVC(positive_fraction=0.5), (data.X_train, data.y_train, data.X_test, data.y_test))]
    cases.append(("digits, seed 0", TransductiveSVC(), digits_split(0)))
    for name, est, (X, y_semi, X_test, y_test) in cases:
        with timed() as t:
            gs = GridSearchCV(est, grid, cv=SemiSupervisedKFold(3), scoring="accuracy").fit(X, y_semi)
        best, cv, test = gs.best_params_, gs.best_score_, gs.score(X_test, y_test)
        print("tuning", name, best, f"{cv:.4f}", f"{test:.4f}", flush=True)
        label = f"TransductiveSVC({'positive_fraction=0.5' if est.positive_fraction == 0.5 else ''})"
        rows.append([name, label, best, f"{cv:.1%}", f"{test:.1%}", f"{t.cpu:.1f}"])
    header = ["data", "estimator", "best parameters", "CV accuracy", "test accuracy", "CPU s (whole search)"]
    return (
        "### Choosing alpha and unlabeled_weight with SemiSupervisedKFold\n\n"
        f"`GridSearchCV(estimator, {grid}, cv=SemiSupervisedKFold(3), scoring='accuracy')`: the labeled rows "
        "are split in 3 stratified folds, every unlabeled row is in every training fold. Test accuracy of the "
        "refitted best model on the held-out test rows.\n\n" + markdown_table(header, rows)
    )


def section_cv():
    data = load_pcmac()
    est = TransductiveSVC(positive_fraction=0.5)
    held_out = clone(est).fit(data.X_train, data.y_train).score(data.X_test, data.y_test)
    rows = []
    for scoring in (None, "accuracy", "f1"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns when a fold's score is NaN
            plain = cross_val_score(est, data.X_train, data.y_train, cv=5, scoring=scoring).mean()
        semi = cross_val_score(est, data.X_train, data.y_train, cv=SemiSupervisedKFold(5), scoring=scoring).mean()
        print("cv", scoring, f"{plain:.3f}", f"{semi:.3f}", flush=True)
        name = "default (`score`)" if scoring is None else f"`{scoring!r}`"
        rows.append([name, f"{plain:.3f}", f"{semi:.3f}"])
    return (
        "### Plain cross-validation against SemiSupervisedKFold\n\n"
        f"pcmac around `TransductiveSVC(positive_fraction=0.5)`; held-out test accuracy {held_out:.3f}. "
        "Mean over the folds of `cross_val_score(estimator, X_train, y_train, cv=..., scoring=...)`.\n\n"
        + markdown_table(["scoring", "plain `cv=5`", "`cv=SemiSupervisedKFold(5)`"], rows)
    )


SECTIONS = {name: globals()[f"section_{name}"] for name in ("pcmac", "20ng", "digits", "tuning", "cv")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run these sections only")
    parser.add_argument("--out", default=None, help="default: benchmarks/results/when_to_use.md")
    add_allow_dirty(parser)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    results = ResultsFile(RESULTS, args.out, allow_dirty=args.allow_dirty)
    done = {}
    for key in args.only or list(SECTIONS):
        with results.skipping(f"section {key}"):
            done[key] = SECTIONS[key]()
            results.save_progress(sections_text(header(), done))  # a long run keeps what it measured
    finish_sections(results, header(), done, list(SECTIONS), args.only)


def header():
    return (
        f"# When to use which: measured cases\n\n{provenance()}\n\n"
        "Sections can be rerun alone with `--only`; a 2-core machine shared with other jobs (CPU times are "
        "inflated and indicative only).\n\n"
    )


if __name__ == "__main__":
    main()
