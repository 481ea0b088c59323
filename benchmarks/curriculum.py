"""Curriculum Labeling against supervised, fixed-threshold pseudo-labeling and fine-tuning::

    OMP_NUM_THREADS=1 python benchmarks/curriculum.py [--quick] [--only mnist-lr mnist-mlp 20ng]

Test accuracy per round of (round 0 of every method is the supervised model on the labeled rows):

* ``CL``: :class:`skssl.self_training.CurriculumLabelingClassifier` with its defaults (percentile step 20, a
  fresh model per round, class weights that hold each class at its share of the labeled rows) but
  ``safeguard=None``, so that every round is the paper's;
* ``CL, no class weights``: the same with ``class_weighting=False``;
* ``CL, inverse-frequency weights``: the reference program's (``class_weighting="inverse_frequency"``);
* ``CL, reinitialize=False``: the paper's fine-tuning ablation (Table 7);
* ``CL with the safeguard (defaults)``: the estimator as a user gets it, whose cross-validated safeguard may
  return round 0's model; final model only.
* ``fixed 0.9`` / ``fixed 0.9995``: pseudo-labeling with a handpicked threshold (paper Table 6): every round
  takes, from the whole unlabeled set, the rows whose maximum probability is at least the threshold and fits a
  fresh model on them and the labeled rows; five rounds, like CL's five;
* ``sklearn SelfTraining 0.9``: :class:`sklearn.semi_supervised.SelfTrainingClassifier` (threshold 0.9, five
  rounds; its pseudo-labels never leave), final round only.

Data (``benchmarks/README.md``): MNIST (a random subsample of the training set with 10 labels per class, the
full 10,000-image test set) around ``LogisticRegression`` and, when ``skssl.deep`` is installed, around the
default MLP ``SupervisedNetClassifier`` (``random_state`` set to the seed, so all methods share round 0; with it
set, CL does not reseed the net between rounds); 20 Newsgroups (six groups, headers removed, TF-IDF, sparse)
around ``SGDClassifier(loss="log_loss")``. Seeds 0-2 draw the labeled rows.
"""

import argparse
import inspect
import warnings

import numpy as np
from _harness import RESULTS_DIR, ResultsFile, add_allow_dirty, finish_sections, markdown_table, provenance, timed
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.semi_supervised import SelfTrainingClassifier

from skssl.datasets import fetch_20newsgroups_bydate, fetch_mnist, make_semi_supervised
from skssl.self_training import CurriculumLabelingClassifier

RESULTS = RESULTS_DIR / "curriculum.md"
SECTIONS = ["mnist-lr", "mnist-mlp", "20ng"]
GROUPS = ["comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "rec.autos", "rec.motorcycles", "sci.space", "sci.med"]

# Test accuracies of every fit made by a scored estimator, in fit order.
ROUND_SCORES = []
TEST_SET = {}


def scored(estimator):
    """A copy of ``estimator`` whose class also records its test accuracy after every fit.

    CurriculumLabelingClassifier keeps only its final model; this subclass lets the benchmark
    read each round's model without changing the estimator's parameters or code paths.
    """
    base = type(estimator)

    def fit(self, X, y, **kwargs):
        base.fit(self, X, y, **kwargs)
        ROUND_SCORES.append(np.mean(np.asarray(self.predict(TEST_SET["X"])) == TEST_SET["y"]))
        return self

    fit.__signature__ = inspect.signature(base.fit)  # CL weights a fit whose signature takes sample_weight
    cls = type(base.__name__, (base,), {"fit": fit, "__module__": __name__})
    return cls(**estimator.get_params(deep=False))


def fixed_threshold(estimator, X, y_semi, threshold, n_rounds=5):
    """Pseudo-labeling with a fixed threshold; each round re-selects from all unlabeled rows."""
    lab, unl = np.flatnonzero(y_semi != -1), np.flatnonzero(y_semi == -1)
    model = clone(estimator).fit(X[lab], y_semi[lab])
    counts = [0]
    for _ in range(n_rounds):
        proba = model.predict_proba(X[unl])
        chosen = np.flatnonzero(proba.max(axis=1) >= threshold)
        rows = np.concatenate([lab, unl[chosen]])
        y_pool = np.concatenate([y_semi[lab], model.classes_[proba[chosen].argmax(axis=1)]])
        model = clone(estimator).fit(X[rows], y_pool)
        counts.append(chosen.shape[0])
    return counts


def run_methods(estimator, X, y_semi, X_test, y_test, seed):
    """Per-method list of per-round test accuracies, pseudo-row counts and seconds."""
    TEST_SET.update(X=X_test, y=y_test)
    out = {}
    # the rounds are followed without the safeguard, whose folds would add their own fits
    cl_variants = [
        ("CL", {}),
        ("CL, no class weights", {"class_weighting": False}),
        ("CL, inverse-frequency weights", {"class_weighting": "inverse_frequency"}),
        ("CL, reinitialize=False", {"reinitialize": False}),
    ]
    for name, params in cl_variants:
        ROUND_SCORES.clear()
        with timed() as t:
            cl = CurriculumLabelingClassifier(scored(estimator), safeguard=None, random_state=seed, **params)
            cl.fit(X, y_semi)
        out[name] = (list(ROUND_SCORES), [h["n_pseudo"] for h in cl.history_], t.wall)
    with timed() as t:
        cl = CurriculumLabelingClassifier(clone(estimator), random_state=seed).fit(X, y_semi)
    acc = np.mean(cl.predict(X_test) == y_test)
    out["CL with the safeguard (defaults)"] = ([acc], [cl.history_[-1]["n_pseudo"]], t.wall)
    for threshold in (0.9, 0.9995):
        ROUND_SCORES.clear()
        with timed() as t:
            counts = fixed_threshold(scored(estimator), X, y_semi, threshold)
        out[f"fixed {threshold}"] = (list(ROUND_SCORES), counts, t.wall)
    with timed() as t:
        st = SelfTrainingClassifier(clone(estimator), threshold=0.9, max_iter=5).fit(X, y_semi)
    acc = np.mean(st.predict(X_test) == y_test)
    out["sklearn SelfTraining 0.9"] = ([acc], [int((st.labeled_iter_ > 0).sum())], t.wall)
    return out


def load_newsgroups():
    """TF-IDF of the bodies (headers name the group) of six groups, train and test splits."""
    news = fetch_20newsgroups_bydate()
    label = np.full(len(news.target_names), -1)  # group code -> position in GROUPS
    label[[news.target_names.index(group) for group in GROUPS]] = np.arange(len(GROUPS))
    out = []
    for split in ("train", "test"):
        target = label[getattr(news, f"target_{split}")]
        keep = np.flatnonzero(target >= 0)
        out.append(([getattr(news, f"data_{split}")[i] for i in keep], target[keep]))
    vec = TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english")
    X = vec.fit_transform(out[0][0])
    return X, out[0][1], vec.transform(out[1][0]), out[1][1]


def table(title, runs):
    """Markdown table: one row per method, mean over seeds of the accuracy of each round."""
    methods = list(runs[0])
    n_rounds = max(len(runs[0][m][0]) for m in methods)
    head = ["method"] + [f"round {r}" for r in range(n_rounds)] + ["pseudo rows, last round", "seconds"]
    rows = []
    for m in methods:
        accs = np.array([run[m][0] for run in runs])
        mean, std = accs.mean(axis=0), accs.std(axis=0)
        cells = [""] * n_rounds
        start = n_rounds - mean.shape[0]
        for i, (a, s) in enumerate(zip(mean, std)):
            cells[start + i] = f"{a:.4f} ± {s:.4f}" if len(runs) > 1 else f"{a:.4f}"
        pseudo = np.mean([run[m][1][-1] for run in runs])
        secs = np.mean([run[m][2] for run in runs])
        rows.append([m] + cells + [f"{pseudo:.0f}", f"{secs:.1f}"])
    return f"### {title}\n\n" + markdown_table(head, rows)


def mnist_sections(which, seeds, n_mnist, results):
    mnist = fetch_mnist()
    rows = np.random.RandomState(0).choice(mnist.y_train.shape[0], n_mnist, replace=False)
    X, y = mnist.X_train[rows].reshape(n_mnist, -1).astype(np.float32) / 255.0, mnist.y_train[rows]
    X_test, y_test = mnist.X_test.reshape(mnist.X_test.shape[0], -1).astype(np.float32) / 255.0, mnist.y_test
    setups = []
    if "mnist-lr" in which:
        setups.append(("mnist-lr", "LogisticRegression(max_iter=300)", LogisticRegression(max_iter=300)))
    if "mnist-mlp" in which:
        try:
            from skssl.deep import SupervisedNetClassifier
        except ImportError:
            print("skipping the MLP runs: skssl.deep needs torch and skorch (pip install 'skssl[deep]')")
            results.degrade("MNIST MLP section skipped (no torch/skorch)")
        else:
            setups.append(("mnist-mlp", "default MLP (skssl.deep.SupervisedNetClassifier)", SupervisedNetClassifier()))
    sections = {}
    for key, name, est in setups:
        runs = []
        for seed in seeds:
            y_semi = make_semi_supervised(y, 10, per_class=True, random_state=seed)
            # one seed for every method, so that round 0 is the same model for all of them
            seeded = clone(est).set_params(random_state=seed)
            runs.append(run_methods(seeded, X, y_semi, X_test, y_test, seed))
            print(name, seed, {m: round(v[0][-1], 4) for m, v in runs[-1].items()}, flush=True)
        sections[key] = table(f"MNIST, {n_mnist} training images, 10 labels per class, {name}", runs)
    return sections


def newsgroups_section(seeds):
    X, y, X_test, y_test = load_newsgroups()
    est = SGDClassifier(loss="log_loss", alpha=1e-4, random_state=0)
    runs = []
    for seed in seeds:
        y_semi = make_semi_supervised(y, 10, per_class=True, random_state=seed)
        runs.append(run_methods(est, X, y_semi, X_test, y_test, seed))
        print("20NG", seed, {m: round(v[0][-1], 4) for m, v in runs[-1].items()}, flush=True)
    title = (
        f"20 Newsgroups, 6 groups, {X.shape[0]} training documents ({X.shape[1]} TF-IDF "
        f"features, sparse), 10 labels per class, SGDClassifier(loss='log_loss')"
    )
    return {"20ng": table(title, runs)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one seed, smaller MNIST subsample")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="these sections only; the others are kept")
    add_allow_dirty(parser)
    args = parser.parse_args()
    which = set(args.only or SECTIONS)
    seeds = [0] if args.quick else [0, 1, 2]
    n_mnist = 3000 if args.quick else 10000
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    results = ResultsFile(
        RESULTS, reduced=["--quick (one seed, 3000 MNIST images)"] if args.quick else [], allow_dirty=args.allow_dirty
    )
    sections = {}
    if which & {"mnist-lr", "mnist-mlp"}:
        with results.skipping("MNIST"):
            sections.update(mnist_sections(which, seeds, n_mnist, results))
    if "20ng" in which:
        with results.skipping("20 Newsgroups"):
            sections.update(newsgroups_section(seeds))
    header = (
        f"# Curriculum Labeling benchmark\n\n{provenance()}\n\n"
        "Sections can be rerun alone with `--only mnist-lr|mnist-mlp|20ng`. Test accuracy after each round, "
        f"mean ± std over seeds {seeds} (the seed draws the labeled rows). Round 0 is the "
        "supervised model on the labeled rows; CL rounds 1-5 use percentiles 80, 60, 40, 20, 0; "
        "the fixed-threshold rounds re-select from all unlabeled rows each round. `pseudo rows` is the "
        "number of unlabeled rows used by the last fit. The CL rows that follow the rounds run with "
        "`safeguard=None`; `CL with the safeguard (defaults)` (which may return round 0's model) and "
        "sklearn's SelfTrainingClassifier are shown at their final model only.\n\n"
    )
    finish_sections(results, header, sections, SECTIONS, args.only)


if __name__ == "__main__":
    main()
