"""Paper scale: time and peak memory of TransductiveSVC and DeterministicAnnealingSVC against nnz::

    python benchmarks/linear_scaling.py [--rows ...] [--stack 7] [--n-jobs 1] [--out FILE]

Problems
--------
* **RCV1-shaped** (:func:`make_rcv1_like`): SVMlin's paper ran on RCV1 (804,414 documents, 47,236
  features, about 76 non-zeros per row). Each document draws a Poisson length of Zipf-Mandelbrot
  distributed terms (rank ``k`` with probability ``1 / (k + 2.7)^1.1``; repeated terms add up); values
  ``(1 + log tf) * log(n / df)``, rows scaled to unit norm (``TfidfVectorizer(sublinear_tf=True)``).
  Labels: the sign of a sparse hyperplane (Gaussian weights on 5% of the terms, among the 20,000 most
  frequent) shifted to its 47th percentile (RCV1's CCAT share), 5% flipped; 1% of the rows keep their
  label; ``positive_fraction`` is the true fraction of the unlabeled rows. Smaller sizes (``--rows``)
  are the first rows of the same stream.
* **20 Newsgroups stacked**: the "comp.* + sci.* vs the rest" training matrix (11,314 x 53,724, 1.54M
  nnz) repeated ``--stack`` times (7: 10.7M nnz), 1% labeled (seed 0), the true positive fraction.

Every fit runs in its own child (``linear_subprocess.run_skssl``) with the user's environment minus the thread
variables, ``--n-jobs``, alpha = 1e-3, unlabeled_weight = 1. Reported: CPU and wall time of ``fit``, the
child's peak RSS and its growth during ``fit`` against the CSR size of X, and the log-log slope of time
against nnz over the RCV1-shaped sizes, over all sizes and from 4M nnz up (where the CSR arrays leave the
cache and every mat-vec becomes bound by memory bandwidth). Goals (issue 9): peak memory <= 2x CSR, slope <=
1.05, RCV1-shaped TSVM under 5 minutes. ``--max-da-nnz`` limits DA's sizes.
"""

import argparse
import tempfile
from pathlib import Path

import linear_subprocess as lsp
import numpy as np
import scipy.sparse as sp
from _harness import (
    RESULTS_DIR,
    Lines,
    ResultsFile,
    add_allow_dirty,
    fmt,
    markdown_row,
    provenance,
    reductions,
    table_head,
)

from skssl.datasets import load_newsgroups_binary

RCV1_ROWS, RCV1_FEATURES, RCV1_NNZ_PER_ROW = 804_414, 47_236, 76


def make_rcv1_like(n_rows, n_features=RCV1_FEATURES, nnz_per_row=RCV1_NNZ_PER_ROW, chunk=50_000):
    """A sparse tf-idf-like problem of RCV1's shape (the module docstring); returns ``(X, y_semi, y)``.

    Rows are generated in chunks of ``chunk`` documents from one random
    stream, so the first ``m`` rows of a big problem are the problem with
    ``n_rows = m``.
    """
    rng = np.random.RandomState(0)
    ranks = np.arange(n_features)
    prob = 1.0 / (ranks + 2.7) ** 1.1
    cdf = np.cumsum(prob / prob.sum())
    # Tokens per document: repeated terms merge, so draw more tokens than the
    # target number of distinct terms (the factor is measured for this law).
    tokens_per_row = nnz_per_row * 1.28
    # Terms are shuffled so that feature index does not encode frequency.
    term_of_rank = rng.permutation(n_features)
    w_true = np.zeros(n_features)
    support = term_of_rank[rng.choice(20_000, int(0.05 * n_features), replace=False)]
    w_true[support] = rng.randn(support.size)
    blocks = []
    for start in range(0, n_rows, chunk):
        m = min(chunk, n_rows - start)
        lengths = np.maximum(1, rng.poisson(tokens_per_row, size=m))
        cols = term_of_rank[np.searchsorted(cdf, rng.random_sample(lengths.sum()))]
        cols = np.minimum(cols, n_features - 1)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        block = sp.csr_matrix((np.ones(cols.size), cols, indptr), shape=(m, n_features))
        block.sum_duplicates()  # term counts
        blocks.append(block)
    X = sp.vstack(blocks, format="csr")
    del blocks
    df = np.bincount(X.indices, minlength=n_features)
    idf = np.log(n_rows / np.maximum(df, 1))
    X.data = (1.0 + np.log(X.data)) * idf[X.indices]
    norms = np.sqrt(np.add.reduceat(X.data**2, X.indptr[:-1])) if X.nnz else np.ones(n_rows)
    norms[norms == 0] = 1.0
    X.data /= np.repeat(norms, np.diff(X.indptr))
    score = X @ w_true
    y = (score > np.quantile(score, 0.53)).astype(np.int64)
    flips = rng.random_sample(n_rows) < 0.05
    y[flips] = 1 - y[flips]
    y_semi = np.full(n_rows, -1)
    lab = rng.choice(n_rows, max(2, round(0.01 * n_rows)), replace=False)
    y_semi[lab] = y[lab]
    return X, y_semi, y


def slope(nnz, t):
    if len(nnz) < 2:
        return None
    return float(np.polyfit(np.log(nnz), np.log(t), 1)[0])


DEFAULT_ROWS = [13_000, 52_000, 200_000, RCV1_ROWS]
HEADER = ["problem", "rows", "nnz", "CSR MB", "method", "CPU s", "wall s", "peak RSS MB", "peak / CSR"]
HEADER += ["fit RSS growth / CSR", "n_iter_", "CPU ms / n_iter_ / M nnz", "objective"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=DEFAULT_ROWS, help="RCV1-shaped sizes (0: none)")
    parser.add_argument("--max-da-nnz", type=float, default=16e6, help="skip DA above this many nnz")
    parser.add_argument("--stack", type=int, default=7, help="copies of 20NG's training matrix (0: skip)")
    parser.add_argument("--data-20ng", default=None)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per fit before it is abandoned")
    parser.add_argument("--out", default=None, help="default: benchmarks/results/linear_scaling.md")
    add_allow_dirty(parser)
    args = parser.parse_args(argv)
    reduced = reductions(args, rows=DEFAULT_ROWS, stack=7, max_da_nnz=16e6)
    reduced += [f"--n-jobs {args.n_jobs} (the default table is n_jobs=1)"] if args.n_jobs != 1 else []
    results = ResultsFile(RESULTS_DIR / "linear_scaling.md", args.out, reduced=reduced, allow_dirty=args.allow_dirty)
    log = Lines()
    log("# Linear S3VMs at paper scale: time and memory against nnz", "", provenance(argv), "")
    log(
        f"One run per size (timings are noisy on a shared machine); default threads, n_jobs={args.n_jobs}, "
        f"alpha={lsp.ALPHA}, unlabeled_weight={lsp.LAM_U}.",
        "",
        "Peak RSS: the child's high-water mark during `fit` (reset just before it), which includes the "
        "Python interpreter with numpy/scipy/scikit-learn (about 150 MB) and X itself; fit RSS growth: that "
        "peak minus the RSS just before `fit`, i.e. the memory the fit adds to X. The goal peak <= 2x CSR "
        "means growth / CSR <= 1.",
        "",
        *table_head(HEADER),
    )
    timings = {m: [] for m in lsp.ESTIMATORS}

    def slopes():
        notes = []
        for method, ts in timings.items():
            if len(ts) < 2:
                continue
            nnz, cpu, wall, n_iter = zip(*ts)
            text = (
                f"{method}, RCV1-shaped, log-log slope of time against nnz ({min(nnz) / 1e6:.1f}M to "
                f"{max(nnz) / 1e6:.1f}M nnz): wall {slope(nnz, wall):.2f}, CPU {slope(nnz, cpu):.2f}"
            )
            big = [t for t in ts if t[0] >= 4e6]
            if len(big) >= 2:
                big_nnz, big_cpu, big_wall, _ = zip(*big)
                text += f"; from 4M nnz up: wall {slope(big_nnz, big_wall):.2f}, CPU {slope(big_nnz, big_cpu):.2f}"
            text += " (goal <= 1.05)"
            per_iter = [c / i for c, i in zip(cpu, n_iter)]
            text += f"; n_iter_ from {n_iter[0]} to {n_iter[-1]} (slope {slope(nnz, n_iter):.2f}), CPU per "
            text += f"n_iter_ slope {slope(nnz, per_iter):.2f}"
            notes.append(text + ".")
        return notes

    def save(final=False):
        # Saved after every fit (to the partial file), so that a run stopped early keeps its rows.
        text = "\n".join(log + [""] + slopes()) + "\n"
        return results.finish(text) if final else results.save_progress(text)

    with tempfile.TemporaryDirectory(prefix="skssl-scaling-") as workdir:
        problems = []
        sizes = sorted(r for r in args.rows if r > 0)  # --rows 0: no RCV1-shaped problem
        if sizes:
            X_full, y_semi_full, y_full = make_rcv1_like(sizes[-1])
            for rows in sizes:
                X = X_full[:rows] if rows < X_full.shape[0] else X_full
                problems.append(("RCV1-shaped", X, y_semi_full[:rows], y_full[:rows]))
            del X_full
        if args.stack:
            with results.skipping("stacked 20 Newsgroups"):
                ng = load_newsgroups_binary(args.data_20ng)
                X = sp.vstack([ng.X_train] * args.stack, format="csr")
                y = np.tile(ng.y_train, args.stack)
                lab = np.random.RandomState(0).choice(y.size, round(0.01 * y.size), replace=False)
                y_semi = np.where(np.isin(np.arange(y.size), lab), y, -1)
                problems.append((f"20NG x{args.stack}", X, y_semi, y))
                del X, y_semi, y
        while problems:
            name, X, y_semi, y = problems.pop(0)
            problem = lsp.save_problem(Path(workdir) / "p", X, y_semi)
            csr_mb = lsp.csr_bytes(X) / 2**20
            r = float(y[y_semi == -1].mean())  # the true positive fraction of the unlabeled rows
            for method, estimator in lsp.ESTIMATORS.items():
                if method == "DA" and X.nnz > args.max_da_nnz:
                    continue
                params = lsp.params(r, n_jobs=args.n_jobs)
                try:
                    res = lsp.run_skssl(problem, estimator, params, timeout=args.timeout)
                except Exception as exc:  # noqa: BLE001 - a size that fails is reported, the run goes on
                    results.degrade(f"{name} {X.shape[0]} rows {method} failed")
                    failed = f"failed: {exc}".splitlines()[0]
                    log(markdown_row([name, X.shape[0], X.nnz, f"{csr_mb:.0f}", method, failed]))
                    save()
                    continue
                if name.startswith("RCV1"):
                    timings[method].append((X.nnz, res["cpu"], res["wall"], res["n_iter"]))
                per_iter = res["cpu"] / res["n_iter"] / (X.nnz / 1e6) * 1e3 if res["n_iter"] else None
                cells = [name, X.shape[0], X.nnz, f"{csr_mb:.0f}", method, f"{res['cpu']:.1f}", f"{res['wall']:.1f}"]
                cells += [f"{res['rss_mb']:.0f}", f"{res['rss_mb'] / csr_mb:.2f}"]
                cells += [f"{res['fit_rss_growth_mb'] / csr_mb:.2f}", fmt(res["n_iter"], "d"), fmt(per_iter, ".1f")]
                log(markdown_row(cells + [fmt(res["objective"], ".6f")]))
                save()
            for f in Path(workdir).glob("p.*"):
                f.unlink()
            del X, y_semi, y
    for text in slopes():
        print(text)
    save(final=True)


if __name__ == "__main__":
    main()
