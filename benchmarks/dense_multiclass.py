"""CPU time of TSVM, one-vs-rest DA and Potts DA on dense MNIST pixels, two versions of skssl side by side.

The problem: 4,000 MNIST training images (stratified, seed 0), 784 pixels scaled to [0, 1] (a dense ndarray),
10 classes, 200 labels (``make_semi_supervised(y, 200, random_state=draw)``), and 2,000 stratified test images
for the accuracy; the estimators with their defaults. Each fit runs in its own process (``PYTHONPATH`` = the
source tree of the version), one after the other: in each repeat the methods follow one another and the two
versions alternate which goes first (``--first`` in the first repeat). CPU seconds of ``fit`` are the
process's (all its threads). The BLAS thread count is set for both versions (``--blas-threads``, default 1:
the old version's dense products ran on numpy's BLAS, and OpenBLAS's threads on a shared machine cost it up to
three times the CPU time of one thread; the new version calls no threaded BLAS routine). Run it with as little
else on the machine as possible::

    python benchmarks/dense_multiclass.py --old /path/to/old/skssl/tree [--repeats 3] [--draw 0]

``--old`` is a source tree whose compiled kernels are built (the new version is this tree). MNIST is found by
:func:`skssl.datasets.fetch_mnist`. Fewer repeats, no ``--old`` or a subset of methods make the run partial
(``benchmarks/README.md``).

``--cost`` measures this version alone, as a user would judge it: with ``--labels 40`` (4 per class, the
setting of the semi-supervised papers' MNIST runs), draw ``r`` in repeat ``r``, the methods in alternating
order, and the supervised baselines ``LogisticRegression()`` and ``LinearSVC()`` fitted on the labeled rows;
per draw, each method's CPU over TSVM's and its accuracy over the better baseline's. A complete run writes
``results/dense_multiclass_cost.md``::

    python benchmarks/dense_multiclass.py --cost --labels 40 [--repeats 3]
"""

import argparse
import statistics
from pathlib import Path

from _harness import RESULTS_DIR, ROOT, ResultsFile, markdown_table, provenance, reductions, run_in_child, timed

METHODS = ("tsvm", "da", "potts")
N_TRAIN, N_TEST, N_LABELS = 4000, 2000, 200
HEADER = ["method", "version", "CPU s (repeats)", "median CPU s", "wall s (median)", "accuracy", "x TSVM"]


def _load(draw, n_labels=N_LABELS):
    """The MNIST problem as ``benchmarks/user_value.py`` builds it (its ``_mnist`` and ``image_split``)."""
    import numpy as np
    from sklearn.model_selection import train_test_split

    from skssl.datasets import DatasetUnavailableError, fetch_mnist, make_semi_supervised

    def cap(y, n, seed=0):
        keep, _ = train_test_split(np.arange(len(y)), train_size=n, stratify=y, random_state=seed)
        return np.sort(keep)

    data = fetch_mnist()
    if "openml" in str(data.source):
        raise DatasetUnavailableError("MNIST: no local copy (OpenML's row order gives another subsample)")
    keep, test = cap(data.y_train, N_TRAIN), cap(data.y_test, N_TEST)
    X = data.X_train[keep].reshape(len(keep), -1) / 255.0
    y = data.y_train[keep].astype(np.int64)
    X_test = data.X_test[test].reshape(len(test), -1) / 255.0
    y_test = data.y_test[test].astype(np.int64)
    return X, make_semi_supervised(y, n_labels, random_state=draw), X_test, y_test


def fit_child(method, draw, n_labels=N_LABELS):
    """Child: fit one estimator with the skssl of ``PYTHONPATH``; its CPU and wall seconds and test accuracy."""
    import warnings

    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    import skssl
    from skssl.self_training import LabeledOnlyClassifier
    from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC

    X, y_semi, X_test, y_test = _load(draw, n_labels)
    est = {
        "tsvm": TransductiveSVC,
        "da": DeterministicAnnealingSVC,
        "potts": PottsDeterministicAnnealingSVC,
        "logreg": lambda: LabeledOnlyClassifier(LogisticRegression()),
        "linearsvc": lambda: LabeledOnlyClassifier(LinearSVC()),
    }[method]()
    with warnings.catch_warnings(record=True) as caught, timed() as t:
        warnings.simplefilter("always")
        est.fit(X, y_semi)
    acc = float((est.predict(X_test) == y_test).mean())
    return {"cpu": t.cpu, "wall": t.wall, "acc": acc, "skssl": skssl.__file__, "warnings": len(caught)}


def _run(tree, method, draw, blas_threads):
    res = run_in_child(fit_child, method, draw, threads=blas_threads, pythonpath=str(tree))
    if not res["skssl"].startswith(str(Path(tree).resolve())):
        raise RuntimeError(f"{tree}: the child imported skssl from {res['skssl']}")
    return res


def _table(args, times, versions):
    rows = []
    for method in METHODS:
        for name, _ in versions:
            runs = times.get((method, name), [])
            if not runs:
                continue
            med = statistics.median(r["cpu"] for r in runs)
            tsvm = times.get(("tsvm", name), [])
            ratio = f"{med / statistics.median(r['cpu'] for r in tsvm):.1f}" if tsvm else "-"
            cpus = ", ".join(f"{r['cpu']:.1f}" for r in runs)
            accs = ", ".join(sorted({f"{r['acc']:.4f}" for r in runs}))
            wall = statistics.median(r["wall"] for r in runs)
            rows.append([method, name, cpus, f"{med:.1f}", f"{wall:.1f}", accs, ratio])
    return (
        "# Dense multi-class: TSVM, one-vs-rest DA and Potts DA on MNIST pixels\n\n"
        f"{args.provenance}\n\n"
        f"MNIST, {N_TRAIN} stratified training images (784 pixels / 255, dense), 10 classes, {N_LABELS} labels "
        f"(draw {args.draw}), {N_TEST} stratified test images; estimators with their defaults; "
        f"{args.blas_threads} BLAS/OpenMP thread(s); each fit in its own process, the versions alternating.\n\n"
        "CPU seconds of `fit` per repeat (median); test accuracy; the last column is the method's median CPU time "
        "over TSVM's of the same version.\n\n"
        + markdown_table(HEADER, rows)
        + "".join(f"\n- `{name}`: {tree}" for name, tree in versions)
        + "\n"
    )


BASELINES = ("logreg", "linearsvc")
COST_HEADER = ["draw", "method", "CPU s", "x TSVM", "accuracy", "over the better baseline (points)"]


def _cost_table(args, runs):
    rows = []
    for draw in sorted({d for d, _ in runs}):
        tsvm = runs.get((draw, "tsvm"))
        best = max((runs[(draw, m)]["acc"] for m in BASELINES if (draw, m) in runs), default=None)
        for method in (*BASELINES, *METHODS):
            if (draw, method) not in runs:
                continue
            r = runs[(draw, method)]
            ratio = f"{r['cpu'] / tsvm['cpu']:.1f}" if tsvm and method in METHODS else "-"
            gain = f"{100 * (r['acc'] - best):+.1f}" if best is not None and method in METHODS else "-"
            rows.append([draw, method, f"{r['cpu']:.1f}", ratio, f"{r['acc']:.4f}", gain])
    return (
        "# Dense multi-class: what TSVM, one-vs-rest DA and Potts DA cost on MNIST pixels, and what they give\n\n"
        f"{args.provenance}\n\n"
        f"MNIST, {N_TRAIN} stratified training images (784 pixels / 255, dense), 10 classes, {args.labels} labels "
        f"(draw = repeat), {N_TEST} stratified test images; every estimator with its defaults, each fit in its own "
        "process, the methods' order alternating between draws, no thread variable set. CPU seconds of `fit` "
        "(all threads); `x TSVM`: over TSVM's CPU on the same draw; the last column: test accuracy over the better "
        "of the two supervised baselines fitted on the labeled rows.\n\n" + markdown_table(COST_HEADER, rows) + "\n"
    )


def cost_main(args):
    """``--cost``: this version alone over ``--repeats`` draws, with the supervised baselines."""
    reduced = reductions(args, repeats=3, methods=METHODS)
    results = ResultsFile(RESULTS_DIR / "dense_multiclass_cost.md", args.out, reduced=reduced)
    args.provenance = provenance()
    methods = [*BASELINES, *[m for m in METHODS if m in args.methods]]
    runs = {}
    for draw in range(args.repeats):
        for method in methods if draw % 2 == 0 else methods[::-1]:
            # no thread variable set: the user's environment
            res = run_in_child(fit_child, method, draw, args.labels, pythonpath=str(ROOT))
            runs[(draw, method)] = res
            print(f"draw {draw} {method}: {res['cpu']:.1f} CPU s, acc {res['acc']:.4f}", flush=True)
            results.save_progress(_cost_table(args, runs))
    text = _cost_table(args, runs)
    results.finish(text)
    print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default=None, help="source tree of the version to compare with (kernels built)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draw", type=int, default=0)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--first", choices=("new", "old"), default="new", help="the version run first in repeat 0")
    parser.add_argument("--out", default=None, help="default: benchmarks/results/dense_multiclass.md")
    parser.add_argument("--cost", action="store_true", help="this version alone, with the supervised baselines")
    parser.add_argument("--labels", type=int, default=N_LABELS, help="labeled images (--cost)")
    args = parser.parse_args()
    if args.cost:
        return cost_main(args)
    reduced = reductions(args, repeats=3, methods=METHODS) + (
        ["no --old version to compare with"] if not args.old else []
    )
    results = ResultsFile(RESULTS_DIR / "dense_multiclass.md", args.out, reduced=reduced)
    args.provenance = provenance()  # before the run: its load average is the machine's before the fits
    versions = [("new", str(ROOT))] + ([("old", str(Path(args.old).resolve()))] if args.old else [])
    if args.first == "old":
        versions = versions[::-1]
    times = {}
    for order in range(args.repeats):
        # Repeat 0 runs the --first version first for every method, repeat 1 the other, and so on.
        for method in [m for m in METHODS if m in args.methods]:
            for name, tree in versions if order % 2 == 0 else versions[::-1]:
                res = _run(tree, method, args.draw, args.blas_threads)
                times.setdefault((method, name), []).append(res)
                print(f"{method} {name}: {res['cpu']:.1f} CPU s, {res['wall']:.1f} s, acc {res['acc']:.4f}", flush=True)
                results.save_progress(_table(args, times, versions))
    text = _table(args, times, versions)
    results.finish(text)
    print(text)


if __name__ == "__main__":
    main()
