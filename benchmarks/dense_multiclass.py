"""What TSVM, one-vs-rest DA and Potts DA cost on dense MNIST pixels, and what they give over supervised models::

    python benchmarks/dense_multiclass.py --cost --labels 40 [--repeats 3] [--methods tsvm da potts] [--out FILE]

The problem of ``user_value.py`` (its ``_mnist`` and ``image_split``): 4,000 MNIST training images (stratified,
seed 0), 784 pixels scaled to [0, 1] (a dense ndarray), 10 classes, ``--labels`` labels drawn by
``make_semi_supervised(y, labels, random_state=draw)``, 2,000 stratified test images; every estimator with its
defaults. Draw ``r`` in repeat ``r``; each fit in its own process with the user's environment (no thread variable
set), the methods' order alternating between draws; the supervised baselines ``LogisticRegression()`` and
``LinearSVC()`` fitted on the labeled rows. Per draw: CPU seconds of ``fit`` (all threads), each method's CPU
over TSVM's and its accuracy over the better baseline's. A complete run writes ``results/dense_multiclass_cost.md``.
(``--cost`` names the mode of the committed command; the comparison of two skssl trees it once sat beside is
retired, see ``CHANGELOG.md``.)
"""

import argparse

from _harness import (
    RESULTS_DIR,
    ROOT,
    ResultsFile,
    add_allow_dirty,
    markdown_table,
    provenance,
    reductions,
    run_in_child,
    timed,
)

METHODS = ("tsvm", "da", "potts")
BASELINES = ("logreg", "linearsvc")
COST_HEADER = ["draw", "method", "CPU s", "x TSVM", "accuracy", "over the better baseline (points)"]


def fit_child(method, draw, n_labels):
    """Child: fit one estimator on draw ``draw``; its CPU and wall seconds and test accuracy."""
    import warnings

    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    from user_value import _mnist, image_split

    from skssl.self_training import LabeledOnlyClassifier
    from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC

    split = image_split(_mnist(), draw, n_labels)
    scale = split.preprocess[0]
    X, X_test = scale.fit_transform(split.X_train), scale.transform(split.X_test)
    est = {
        "tsvm": TransductiveSVC,
        "da": DeterministicAnnealingSVC,
        "potts": PottsDeterministicAnnealingSVC,
        "logreg": lambda: LabeledOnlyClassifier(LogisticRegression()),
        "linearsvc": lambda: LabeledOnlyClassifier(LinearSVC()),
    }[method]()
    with warnings.catch_warnings(record=True), timed() as t:
        warnings.simplefilter("always")
        est.fit(X, split.y_semi)
    return {"cpu": t.cpu, "wall": t.wall, "acc": float((est.predict(X_test) == split.y_test).mean())}


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
        f"MNIST, 4000 stratified training images (784 pixels / 255, dense), 10 classes, {args.labels} labels "
        "(draw = repeat), 2000 stratified test images; every estimator with its defaults, each fit in its own "
        "process, the methods' order alternating between draws, no thread variable set. CPU seconds of `fit` "
        "(all threads); `x TSVM`: over TSVM's CPU on the same draw; the last column: test accuracy over the better "
        "of the two supervised baselines fitted on the labeled rows.\n\n" + markdown_table(COST_HEADER, rows) + "\n"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cost", action="store_true", required=True, help="this version against the baselines")
    parser.add_argument("--labels", type=int, default=200, help="labeled images")
    parser.add_argument("--repeats", type=int, default=3, help="label draws")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--out", default=None, help="default: benchmarks/results/dense_multiclass_cost.md")
    add_allow_dirty(parser)
    args = parser.parse_args()
    results = ResultsFile(
        RESULTS_DIR / "dense_multiclass_cost.md",
        args.out,
        reduced=reductions(args, repeats=3, methods=METHODS),
        allow_dirty=args.allow_dirty,
    )
    args.provenance = provenance()
    methods = [*BASELINES, *[m for m in METHODS if m in args.methods]]
    runs = {}
    for draw in range(args.repeats):
        for method in methods if draw % 2 == 0 else methods[::-1]:
            runs[(draw, method)] = res = run_in_child(fit_child, method, draw, args.labels, pythonpath=str(ROOT))
            print(f"draw {draw} {method}: {res['cpu']:.1f} CPU s, acc {res['acc']:.4f}", flush=True)
            results.save_progress(_cost_table(args, runs))
    results.finish(text := _cost_table(args, runs))
    print(text)


if __name__ == "__main__":
    main()
