"""Where does the time of TransductiveSVC / DeterministicAnnealingSVC go as n grows?

Issue 9 ("Growth with n"): on random sparse data (n x n, 50 nnz per row, labels
from a sparse hyperplane with flips, 1% labeled) TSVM time grew about as n^1.9
and DA took 101 s at 20,000 rows. This script fits both on growing n and counts,
per fit: MFN calls, Newton steps, CGLS iterations, line searches and their
breakpoints, TSVM label switches and switching rounds, DA inner/outer
iterations; with the time spent inside CGLS. Counts are taken by the solvers'
callback (``skssl.svm._callback.solver_callback``), which leaves the fits unchanged.

Run from the repository root (one BLAS thread, as in the issue)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/linear_growth.py --sizes 5000 10000 20000

The table is printed and, with ``--out``, written as markdown.
"""

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import Lines, markdown_row, timed

from skssl.svm import DeterministicAnnealingSVC, TransductiveSVC
from skssl.svm._callback import solver_callback


def random_sparse_problem(
    n, nnz_per_row=50, flip=0.05, labeled_fraction=0.01, support=0.1, normalize=True, values="exponential", seed=0
):
    """n x n CSR with ``nnz_per_row`` uniform columns per row.

    Values: ``"exponential"`` (positive) or ``"normal"``; rows scaled to unit
    norm when ``normalize``. Labels: the sign of a sparse hyperplane (Gaussian
    weights on ``support`` features: a fraction of n when < 1, a count
    otherwise) shifted to its median, ``flip`` of them flipped;
    ``labeled_fraction`` of the rows keep their label, the rest -1.
    """
    rng = np.random.RandomState(seed)
    cols = rng.randint(0, n, size=n * nnz_per_row)
    vals = rng.exponential(1.0, size=n * nnz_per_row) if values == "exponential" else rng.randn(n * nnz_per_row)
    indptr = np.arange(0, n * nnz_per_row + 1, nnz_per_row)
    X = sp.csr_matrix((vals, cols, indptr), shape=(n, n))
    X.sum_duplicates()
    if normalize:
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / norms) @ X
    w = np.zeros(n)
    k = round(support * n) if support < 1 else int(support)
    support = rng.choice(n, k, replace=False)
    w[support] = rng.randn(support.size)
    score = X @ w
    y = (score > np.median(score)).astype(np.int64)
    flips = rng.rand(n) < flip
    y[flips] = 1 - y[flips]
    y_semi = np.full(n, -1)
    lab = rng.choice(n, max(2, round(labeled_fraction * n)), replace=False)
    y_semi[lab] = y[lab]
    return X.tocsr(), y_semi, y


class Probe:
    """Counts the solvers' events (calls, iterations) and CGLS's CPU time through their callback."""

    def __init__(self):
        self.c = Counter()
        self.t = Counter()
        self._context = None

    def __call__(self, event):
        c = self.c
        if event.stage == "mfn":
            c["mfn_calls"] += 1
            c["newton_steps"] += event.n_iter
            c["mfn_capped"] += int(not event.converged)
        elif event.stage == "cgls":
            c["cgls_calls"] += 1
            c["cgls_iters"] += event.n_iter
            c["cgls_rows"] += event.n_rows
            c["cgls_capped"] += int(not event.converged)
            self.t["cgls"] += event.cpu_time
        elif event.stage == "line_search":
            c["line_searches"] += 1
            c["ls_breakpoints"] += event.n_breakpoints
        elif event.stage == "switch":
            c["switch_rounds"] += 1
            c["switches"] += event.n_switched
        elif event.stage == "p" and event.annealed_objective is None:  # the binary DA's optimize_p
            c["optimize_p"] += 1

    def __enter__(self):
        self._context = solver_callback(self)
        self._context.__enter__()
        return self

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


COLUMNS = [
    "mfn_calls",
    "newton_steps",
    "mfn_capped",
    "cgls_calls",
    "cgls_iters",
    "cgls_capped",
    "line_searches",
    "ls_breakpoints",
    "switch_rounds",
    "switches",
    "optimize_p",
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000])
    parser.add_argument("--methods", nargs="+", default=["TSVM", "DA"])
    parser.add_argument("--da-max-n", type=int, default=20000, help="skip DA above this n")
    parser.add_argument("--support", type=float, default=0.1, help="hyperplane support: fraction (<1) or count")
    parser.add_argument("--raw", action="store_true", help="do not normalize the rows")
    parser.add_argument("--values", default="exponential", choices=["exponential", "normal"])
    parser.add_argument("--positive-fraction", type=float, default=None, help="default: estimated")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    log = Lines()
    log(markdown_row(["method", "n", "nnz", "CPU s", "CGLS CPU s", *COLUMNS]), "|" + "---|" * (len(COLUMNS) + 5))
    for n in args.sizes:
        X, y_semi, _ = random_sparse_problem(n, support=args.support, normalize=not args.raw, values=args.values)
        for method in args.methods:
            if method == "DA" and n > args.da_max_n:
                continue
            est = (TransductiveSVC() if method == "TSVM" else DeterministicAnnealingSVC()).set_params(
                positive_fraction=args.positive_fraction
            )
            with Probe() as probe, timed() as t:
                est.fit(X, y_semi)
            c = probe.c
            log(markdown_row([method, n, X.nnz, f"{t.cpu:.2f}", f"{probe.t['cgls']:.2f}", *(c[k] for k in COLUMNS)]))
    if args.out:
        Path(args.out).write_text(log.text())


if __name__ == "__main__":
    main()
