"""The linear S3VMs with their defaults, beside SVMlin 1.0 and beside one skssl solve, in one run::

    python benchmarks/defaults_vs_svmlin.py [DATA] [--quick] [--configs L:SEED ...] [--repeats 3] [--out FILE]

SVMlin's users run its reference configuration: TSVM (``-A 2``, S = 10000) or DA (``-A 3``), lam = 1e-3,
lam_u = 1, r = the true positive fraction of the unlabeled rows (as ``linear_vs_svmlin.py`` runs it). skssl's
users run ``TransductiveSVC()`` / ``DeterministicAnnealingSVC()``: ``alpha="auto"`` with its check on the labeled
rows, the class fraction estimated (the labels, then the clusters' rule), ``safeguard="auto"`` (on text, the
candidates' agreement) and DA's ``initial_temperature="auto"``. Per data set, label draw and method a row holds
SVMlin; the defaults with ``n_jobs=1`` (CPU) and ``n_jobs=2`` (wall); one skssl solve at the values the defaults
chose (``alpha_``, ``intercept_scaling_``, the class fraction, DA's ``initial_temperature_``; ``safeguard=None``)
with the same two ``n_jobs``; the price of the defaults (defaults / one solve); the test accuracy of each. The
fits alternate ``--repeats`` times, each in its own child process (``linear_subprocess.py`` says how each figure
is taken), and each figure is the minimum. Without SVMlin (``--svmlin-src``) its cells stay empty and the run is
partial.

Data: 20 Newsgroups "comp.* + sci.* vs the rest" (``DATA/20news-bydate.tgz`` or skssl's loader, its bydate split)
and the sentence polarity set (Pang & Lee, ``nltk/sentence_polarity.zip`` found as ``skssl.datasets`` finds data: a
stratified 70/30 split, seed 0, then ``TfidfVectorizer(min_df=2)`` fitted on the training sentences, as in
``user_value.py``). Labels: ``newsgroups_labeled_subset`` (SVMlin's uniform draw) of l in {100, 500}, seeds 0-2.

Target (issue "Safety at the price of one solve"): ``TransductiveSVC(n_jobs=2)`` with the defaults takes no more
wall time than SVMlin's TSVM at the true class fraction.
"""

import argparse
import tempfile

import linear_subprocess as lsp
import linear_vs_svmlin as lvs
import _harness
from _harness import RESULTS_DIR, Lines, ResultsFile, add_allow_dirty, fmt, markdown_row, provenance, table_head
from _user_data import load_nltk
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import train_test_split
from sklearn.utils import Bunch

from skssl.datasets import DatasetUnavailableError, load_newsgroups_binary, newsgroups_labeled_subset
from skssl.svm.kernels import _kernels

RESULTS = RESULTS_DIR / "defaults_vs_svmlin.md"
REPEATS = 3
DEFAULT_CONFIGS = [(100, 0), (100, 1), (100, 2), (500, 0), (500, 1), (500, 2)]
QUICK_CONFIGS = [(100, 0)]
CORPORA = ("20ng", "polarity")
TEST_SIZE, SPLIT_SEED = 0.3, 0
HEADER = ["data", "l", "seed", "method", "r", "r used", "alpha_", "T0", "SVMlin CPU s", "SVMlin wall s"]
HEADER += ["defaults CPU s (1)", "defaults wall s (1)", "defaults wall s (2)", "wall (2) / SVMlin"]
HEADER += ["one solve CPU s (1)", "one solve wall s (2)", "defaults / one solve CPU (1)"]
HEADER += ["defaults / one solve wall (2)", "test % SVMlin", "test % defaults", "test % one solve"]
NOTE = (
    "Every fit runs in its own child process with the user's environment minus every thread variable. "
    "SVMlin: its reference run at the true class fraction r (lam = 1e-3, lam_u = 1; TSVM with S = 10000); the "
    "solver CPU time it prints and the wall time of its solver (parser excluded). skssl: CPU (all threads) and "
    "wall time of `fit`; (1) and (2) are `n_jobs=1` and `n_jobs=2`. defaults: `TransductiveSVC()` / "
    "`DeterministicAnnealingSVC()` as constructed, given only `n_jobs`. one solve: the same estimator at the "
    "values the defaults chose (`alpha=alpha_`, `intercept_scaling=intercept_scaling_`, `positive_fraction=` "
    "r used, DA's `initial_temperature=initial_temperature_` (T0), `safeguard=None`). r used: the positive "
    "fraction the defaults solved at (how it was found: below the table). test %: accuracy on the test split "
    "of SVMlin's, the defaults' (`n_jobs=1`) and the one solve's (`n_jobs=1`) models. "
    "Target: wall (2) / SVMlin <= 1.0 for TSVM."
)

FRACTION_NOTE = {
    frozenset({"recomputed as fit computes it"}): (
        "r used: skssl's estimators do not yet expose the class fraction a fit solved at (`class_fractions_` is "
        "to come), so the script recomputes it as `fit` does, on the same rows: the labeled rows' fractions, then "
        "the clusters' rule (`skssl.svm.defaults._cluster_fractions`)."
    ),
    frozenset({"class_fractions_"}): "r used: the fitted `class_fractions_` of the defaults' fit.",
}


def run_row(problem, data, method, svmlin, workdir, repeats, log):
    """Alternate SVMlin / the defaults (``n_jobs`` 1, 2) / one solve (``n_jobs`` 1, 2) ``repeats`` times."""
    estimator, algo = lvs.METHODS[method]
    runs = {key: [] for key in ("svmlin", "defaults1", "defaults2", "one1", "one2")}
    svmlin_run = dict(algo=algo, r=data["r"], n_features=data["X"].shape[1])
    one = resolved = None
    for _ in range(repeats):
        if svmlin is not None:
            runs["svmlin"].append(lsp.run_svmlin(svmlin, data["examples"], data["labels"], workdir, **svmlin_run))
        for n_jobs in (1, 2):
            ask = resolved is None  # what the defaults chose, read once (the fits are deterministic)
            fit = lsp.run_skssl(problem, estimator, {"n_jobs": n_jobs}, y_semi=data["y_path"], resolved=ask)
            runs[f"defaults{n_jobs}"].append(fit)
            if ask:
                resolved = fit["resolved"]
                one = lsp.one_solve_params(resolved)
        for n_jobs in (1, 2):
            runs[f"one{n_jobs}"].append(
                lsp.run_skssl(problem, estimator, {**one, "n_jobs": n_jobs}, y_semi=data["y_path"])
            )

    def best(key, field):
        return min(r[field] for r in runs[key]) if runs[key] else None

    def accuracy(key):
        return (
            lsp.test_accuracy(runs[key][0]["w"], runs[key][0]["b"], data["X_test"], data["y_test"])
            if runs[key]
            else None
        )

    s_wall, d_cpu, d_wall2 = best("svmlin", "wall"), best("defaults1", "cpu"), best("defaults2", "wall")
    o_cpu, o_wall2 = best("one1", "cpu"), best("one2", "wall")
    row = dict(data=data["name"], method=method, ratio2=None if s_wall is None else d_wall2 / s_wall)
    row.update(price_cpu=d_cpu / o_cpu, price_wall=d_wall2 / o_wall2, fraction_from=resolved["fraction_from"])
    row.update(acc_svmlin=accuracy("svmlin"), acc_defaults=accuracy("defaults1"), acc_one=accuracy("one1"))
    t0 = resolved.get("initial_temperature")
    cells = [data["name"], data["l"], data["seed"], method, f"{data['r']:.3f}", f"{resolved['positive_fraction']:.3f}"]
    cells += [f"{resolved['alpha']:.3g}", fmt(t0, ".3g"), fmt(best("svmlin", "cpu"), ".2f"), fmt(s_wall, ".2f")]
    cells += [f"{d_cpu:.2f}", f"{best('defaults1', 'wall'):.2f}", f"{d_wall2:.2f}", fmt(row["ratio2"], ".2f")]
    cells += [f"{o_cpu:.2f}", f"{o_wall2:.2f}", f"{row['price_cpu']:.1f}", f"{row['price_wall']:.1f}"]
    cells += [fmt(row["acc_svmlin"], ".1f"), f"{row['acc_defaults']:.1f}", f"{row['acc_one']:.1f}"]
    log(markdown_row(cells))
    return row


def run_corpus(corpus, configs, methods, svmlin, workdir, repeats, log):
    """The rows of one corpus (a Bunch ``name, X, y, X_test, y_test``): each ``(l, seed)`` label draw, each method."""
    examples, problem = lsp.corpus_files(workdir, corpus.name, corpus.X, corpus.y)
    rows = []
    for l, seed in configs:
        y_semi, r = newsgroups_labeled_subset(corpus.y, l, seed)
        labels, y_path = lsp.draw_files(workdir, corpus.name, l, seed, y_semi)
        data = dict(name=corpus.name, l=l, seed=seed, r=r, X=corpus.X, X_test=corpus.X_test, y_test=corpus.y_test)
        data.update(examples=examples, labels=labels, y_path=y_path)
        rows += [run_row(problem, data, method, svmlin, workdir, repeats, log) for method in methods]
    return rows


def load_20ng(data=None):
    """20 Newsgroups "comp.* + sci.* vs the rest", tf-idf on its bydate training documents."""
    ng = load_newsgroups_binary(f"{data}/20news-bydate.tgz" if data else None)
    return Bunch(name="20ng", X=ng.X_train, y=ng.y_train, X_test=ng.X_test, y_test=ng.y_test)


def load_polarity(data=None):
    """Sentence polarity (class 1: positive): a stratified 70/30 split, tf-idf (min_df=2) fitted on the training rows.

    ``data`` is not read: the file is found as ``skssl.datasets`` finds data (``$SKSSL_DATA``, ``shared/data``).
    """
    raw = load_nltk("sentence_polarity")
    docs_train, docs_test, y_train, y_test = train_test_split(
        raw.X, raw.y, test_size=TEST_SIZE, stratify=raw.y, random_state=SPLIT_SEED
    )
    vectorizer = TfidfVectorizer(min_df=2)
    X_train = vectorizer.fit_transform(docs_train).tocsr()
    return Bunch(name="polarity", X=X_train, y=y_train, X_test=vectorizer.transform(docs_test), y_test=y_test)


LOADERS = {"20ng": load_20ng, "polarity": load_polarity}


def reductions(args):
    """How a run leaves out part of the full run."""
    full = dict(quick=False, configs=None, repeats=REPEATS, methods=list(lvs.METHODS), corpora=list(CORPORA))
    return _harness.reductions(args, **full)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=None, help="folder holding 20news-bydate.tgz (../shared/data)")
    parser.add_argument("--svmlin-src", default=str(lsp.DEFAULT_SVMLIN_SRC), help="SVMlin 1.0 source folder")
    parser.add_argument("--configs", nargs="+", help="l:seed label draws (default: 100 and 500, seeds 0-2)")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--quick", action="store_true", help="one label draw per corpus (l = 100, seed 0)")
    parser.add_argument("--methods", nargs="+", default=list(lvs.METHODS), choices=list(lvs.METHODS))
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    parser.add_argument("--out", default=None, help="default: benchmarks/results/defaults_vs_svmlin.md")
    add_allow_dirty(parser)
    return parser.parse_args(argv)


def configs_of(args):
    """The ``(l, seed)`` label draws of a run."""
    if args.configs:
        return [tuple(int(v) for v in c.split(":")) for c in args.configs]
    return QUICK_CONFIGS if args.quick else DEFAULT_CONFIGS


def summary(name, rows):
    """Lines on a corpus's rows: TSVM's wall against SVMlin (the target), and the price of the defaults."""
    lines = []
    for method in lvs.METHODS:
        mine = [r for r in rows if r["method"] == method]
        if not mine:
            continue
        cpu, wall = [r["price_cpu"] for r in mine], [r["price_wall"] for r in mine]
        line = (
            f"{name} {method}: the defaults cost {min(cpu):.1f}-{max(cpu):.1f}x one solve's CPU time with n_jobs=1 "
            f"and {min(wall):.1f}-{max(wall):.1f}x its wall time with n_jobs=2"
        )
        ratios = [r["ratio2"] for r in mine if r["ratio2"] is not None]
        if ratios:
            line += f"; their n_jobs=2 wall time is {min(ratios):.2f}-{max(ratios):.2f}x SVMlin's"
            if method == "TSVM":
                met = sum(v <= 1.0 for v in ratios)
                line += f" (target <= 1.0: met on {met} of {len(ratios)} rows)"
        lines.append(line + ".")
    return lines


def main(argv=None):
    args = parse_args(argv)
    results = ResultsFile(RESULTS, args.out, reduced=reductions(args), allow_dirty=args.allow_dirty)
    log = Lines()
    with tempfile.TemporaryDirectory(prefix="skssl-svmlin-") as workdir:
        svmlin, how = lsp.build_svmlin(args.svmlin_src, workdir)
        if svmlin is None:
            results.degrade(f"SVMlin not measured: {how}")
        log("# The S3VMs' defaults vs SVMlin 1.0 and vs one solve, side by side", "", provenance(argv), "")
        log(
            f"Timings are noisy on a shared machine: each figure is the minimum of {args.repeats} alternating "
            f"repeats; skssl's kernels compiled (OpenMP: {'yes' if _kernels.OPENMP else 'no'}).",
            "",
            f"SVMlin: {how}; measured in this run." if svmlin is not None else f"SVMlin not measured: {how}.",
            "",
            NOTE,
            "",
            *table_head(HEADER),
        )
        summaries, sources = [], set()
        for name in args.corpora:
            try:
                corpus = LOADERS[name](args.data)
            except DatasetUnavailableError as exc:
                reason = f"{name} not available ({str(exc).splitlines()[0]})"
                results.degrade(f"{name} rows skipped: {reason}")
                summaries.append(f"{name} rows skipped: {reason}.")
                continue

            def log_row(*lines):
                log(*lines)
                results.save_progress(log.text())  # a run stopped early keeps its rows

            rows = run_corpus(corpus, configs_of(args), args.methods, svmlin, workdir, args.repeats, log_row)
            sources.update(r["fraction_from"] for r in rows)
            summaries += summary(corpus.name, rows)
            X = corpus.X
            summaries.append(f"{corpus.name} training matrix: {X.shape[0]} x {X.shape[1]}, {X.nnz} nnz.")
        log("", FRACTION_NOTE.get(frozenset(sources), f"r used: {', '.join(sorted(sources))}."))
        for line in summaries:
            log("", line)
    results.finish(log.text())


if __name__ == "__main__":
    main()
