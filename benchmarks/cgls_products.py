"""One CGLS iteration of l2-SVM-MFN: the Python loop on scipy's products vs skssl's compiled loop.

Times, on the 20 Newsgroups training matrix (``TfidfVectorizer(min_df=2)``, 11,314 x 53,724, 1.5M non-zeros)
and on it stacked ``m`` times for each ``m`` of ``--stack`` (default 1 and 7: 10.7M non-zeros, more than the
caches hold), the minimum over ``--repeats`` runs (5) of 50 CGLS iterations (a tolerance that is never met, so
every run takes exactly 50) of

* the Python CGLS loop with scipy's two mat-vecs per iteration, one thread (skssl's path before the compiled
  kernels; now only the tests' oracle, ``tests/svm/_oracle.py``);
* the same over two row blocks, the second block on a Python pool thread (skssl's ``n_jobs=2`` before the
  compiled kernels);
* the compiled loop ``csr_cgls``, one fused pass over the rows per iteration, one thread (``n_jobs=1``);
* the same over two row blocks on two OpenMP threads (``n_jobs=2``),

all alternating, with BLAS limited to one thread. The figure is milliseconds per iteration, the one-time
``X^T z`` of each run included. Run it on an idle machine::

    python benchmarks/cgls_products.py [DATA_DIR] [--stack 1 7] [--repeats 5]

Writes ``results/cgls_products.md``, followed by the hand-written ``results/cgls_products_notes.md``.
"""

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import RESULTS_DIR, ResultsFile, markdown_table, provenance, reductions, timed
from sklearn.feature_extraction.text import TfidfVectorizer
from threadpoolctl import threadpool_limits

from skssl.datasets import DatasetUnavailableError, fetch_20newsgroups_bydate
from skssl.svm import _mfn
from skssl.svm._rowblocks import RowBlocks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for the tests' oracle
from tests.svm._oracle import cgls as oracle_cgls  # noqa: E402

N_ITER, STACKS, REPEATS = 50, [1, 7], 5
METHODS = [  # what each runs, as the table names it
    "Python loop, scipy's two mat-vecs, one thread (the tests' oracle)",
    "Python loop, scipy over 2 row blocks, Python pool thread (skssl before the kernels)",
    "compiled loop (`csr_cgls`), one fused pass per iteration, one thread (`n_jobs=1`)",
    "compiled loop over 2 row blocks on OpenMP threads (`n_jobs=2`)",
]


class PoolBlocks:
    """``X``'s products over two row blocks, the second on a Python pool thread: skssl's before the kernels.

    Supports ``A @ v``, ``A.T @ z`` and ``A.shape``, which is all the oracle's loop uses.
    """

    def __init__(self, X, executor):
        self.shape = X.shape
        self._executor = executor
        mid = int(np.searchsorted(X.indptr, X.nnz / 2))
        self._bounds = [(0, mid), (mid, X.shape[0])]
        self._blocks = [X[a:b] for a, b in self._bounds]
        self._blocks_t = [blk.T for blk in self._blocks]
        self.T = _PoolBlocksT(self)

    def _run(self, work):
        second = self._executor.submit(work, 1)
        return [work(0), second.result()]

    def __matmul__(self, v):
        return np.concatenate(self._run(lambda k: self._blocks[k] @ v))

    def rmatvec(self, z):
        first, second = self._run(lambda k: self._blocks_t[k] @ z[self._bounds[k][0] : self._bounds[k][1]])
        first += second
        return first


class _PoolBlocksT:
    def __init__(self, parent):
        self._parent = parent
        self.shape = parent.shape[::-1]

    def __matmul__(self, z):
        return self._parent.rmatvec(z)


def time_methods(X, repeats):
    """Milliseconds per CGLS iteration of each method on ``X`` (minimum over ``repeats`` alternating runs)."""
    n, d = X.shape
    rng = np.random.RandomState(0)
    cost, target, alpha = rng.uniform(0.5, 1.0, n), np.sign(rng.randn(n)), 1e-3

    def run(A, python_loop, n_iter=N_ITER):
        w, outputs = np.zeros(d), np.zeros(n)
        solve = oracle_cgls if python_loop else _mfn.cgls
        b, converged, taken = solve(A, cost, target, outputs, w, 0.0, alpha, 1e-300, n_iter)
        assert taken == n_iter and not converged
        return w, b

    def least_squares(solution):  # what CGLS minimizes
        w, b = solution
        residual = target - X @ w - b
        return 0.5 * (alpha * (w @ w + b * b) + cost @ (residual * residual))

    with ThreadPoolExecutor(2) as executor, threadpool_limits(1):
        blocks = RowBlocks(X, executor, 2)
        pool_blocks = PoolBlocks(X, executor)
        methods = dict(zip(METHODS, [(X, True), (pool_blocks, True), (X, False), (blocks, False)]))
        # The same iterations: after 10 the objectives agree to rounding. (Further on, CG on this ill-conditioned
        # system -- random targets, alpha = 1e-3 -- amplifies the order of the sums: about 1e-10 apart after 15
        # iterations and 1e-4 after 20, for any two summation orders, BLAS threads included; all converge alike.)
        f_ref = least_squares(run(X, True, n_iter=10))
        for name, (A, python_loop) in methods.items():
            assert abs(least_squares(run(A, python_loop, n_iter=10)) - f_ref) <= 1e-12 * f_ref, name
        best = dict.fromkeys(methods, np.inf)
        for _ in range(repeats):
            for name, (A, python_loop) in methods.items():
                with timed() as t:
                    run(A, python_loop)
                best[name] = min(best[name], 1e3 * t.wall / N_ITER)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=None, help="folder holding 20news-bydate.tgz")
    parser.add_argument("--stack", type=int, nargs="+", default=STACKS, help="copies of the matrix, one column each")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--out", default=None, help="default: results/cgls_products.md")
    args = parser.parse_args(argv)
    results = ResultsFile(
        RESULTS_DIR / "cgls_products.md", args.out, reduced=reductions(args, stack=STACKS, repeats=REPEATS)
    )
    header = provenance(argv)  # its load average is the one before the timings
    try:
        raw = fetch_20newsgroups_bydate(None if args.data_dir is None else Path(args.data_dir) / "20news-bydate.tgz")
    except DatasetUnavailableError as exc:
        sys.exit(print(f"cgls_products: nothing to time: {exc}"))
    X = TfidfVectorizer(min_df=2).fit_transform(raw.data_train).tocsr()
    columns, best = [], {}
    for m in args.stack:
        Xm = sp.vstack([X] * m, format="csr") if m > 1 else X
        columns.append(f"20 Newsgroups{f' x{m}' if m > 1 else ''} ({Xm.nnz / 1e6:.1f}M nnz) ms")
        best[m] = time_methods(Xm, args.repeats)
        print(columns[-1], {k: round(v, 2) for k, v in best[m].items()}, flush=True)
    rows = [[name] + [f"{best[m][name]:.2f}" for m in args.stack] for name in METHODS]
    notes = RESULTS_DIR / "cgls_products_notes.md"
    text = (
        "# One CGLS iteration: the Python loop on scipy vs skssl's compiled loop\n\n"
        f"{header}\n\nBLAS limited to one thread; minimum over {args.repeats} runs of {N_ITER} iterations, the "
        "methods alternating. Milliseconds per iteration, the one-time `X^T z` of each run included.\n\n"
        + markdown_table(["method", *columns], rows)
        + ("\n" + notes.read_text() if notes.exists() else "")
    )
    results.finish(text)
    print(text)


if __name__ == "__main__":
    main()
