"""One CGLS iteration of l2-SVM-MFN: the Python loop on scipy's products vs skssl's compiled loop.

Times, on the 20 Newsgroups training matrix (DESIGN's tf-idf protocol,
11,314 x 53,724, 1.5M non-zeros; ``--stack m`` stacks it m times), the
minimum over 5 runs of 50 CGLS iterations (a tolerance that is never met, so
every run takes exactly 50) of

* ``python loop, scipy``: the Python CGLS loop with scipy's two mat-vecs
  per iteration, one thread (skssl's path before the compiled kernels; now
  only the tests' oracle, ``tests/svm/_oracle.py``);
* ``compiled``: ``csr_cgls``, one fused pass over the rows per iteration,
  one thread (a fit with ``n_jobs=1``);
* ``compiled x2 (OpenMP)``: the same over two row blocks on two OpenMP
  threads (``n_jobs=2``),

all alternating, with BLAS limited to one thread. The figure is milliseconds
per iteration, the one-time ``X^T z`` of each run included. Run it on an
idle machine::

    python benchmarks/cgls_products.py [DATA_DIR] [--stack 1]

20 Newsgroups is read from ``DATA_DIR/20news-bydate.tgz`` when a folder is
given, else found or downloaded by :func:`skssl.datasets.fetch_20newsgroups_bydate`.
The script prints its table; it writes no file.
"""

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from _harness import provenance, timed
from threadpoolctl import threadpool_limits

from skssl.datasets import DatasetUnavailableError, fetch_20newsgroups_bydate
from skssl.svm import _mfn
from skssl.svm._rowblocks import RowBlocks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for the tests' oracle
from tests.svm._oracle import cgls as oracle_cgls  # noqa: E402

N_ITER = 50


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=None, help="folder holding 20news-bydate.tgz")
    parser.add_argument("--stack", type=int, default=1)
    args = parser.parse_args()
    try:
        raw = fetch_20newsgroups_bydate(None if args.data_dir is None else Path(args.data_dir) / "20news-bydate.tgz")
    except DatasetUnavailableError as exc:
        print(f"cgls_products: nothing to time: {exc}")
        return
    X = TfidfVectorizer(min_df=2).fit_transform(raw.data_train).tocsr()
    if args.stack > 1:
        X = sp.vstack([X] * args.stack, format="csr")
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
        methods = {
            "python loop, scipy": lambda **kw: run(X, True, **kw),
            "compiled": lambda **kw: run(X, False, **kw),
            "compiled x2 (OpenMP)": lambda **kw: run(blocks, False, **kw),
        }
        # The same iterations: after 10 the objectives agree to rounding. (Further on, CG on this ill-conditioned
        # system -- random targets, alpha = 1e-3 -- amplifies the order of the sums: about 1e-10 apart after 15
        # iterations and 1e-4 after 20, for any two summation orders, BLAS threads included; all converge alike.)
        f_ref = least_squares(methods["python loop, scipy"](n_iter=10))
        for name, f in methods.items():
            assert abs(least_squares(f(n_iter=10)) - f_ref) <= 1e-12 * f_ref, name
        best = dict.fromkeys(methods, np.inf)
        for _ in range(5):
            for name, f in methods.items():
                with timed() as t:
                    f()
                best[name] = min(best[name], t.wall / N_ITER)
    print(provenance())
    print(f"20 Newsgroups x{args.stack}: {n} x {d}, {X.nnz} non-zeros; ms per CGLS iteration (min of 5 x {N_ITER})")
    for name, t in best.items():
        print(f"{name:>34}: {1e3 * t:7.2f} ms  ({best['python loop, scipy'] / t:.2f}x the Python loop on scipy)")


if __name__ == "__main__":
    main()
