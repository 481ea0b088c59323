"""CGLS's two products per iteration: scipy's two mat-vecs vs skssl's fused pass.

One CGLS iteration of l2-SVM-MFN needs ``q = X p`` and ``X^T (C q)``. This
script times, on the 20 Newsgroups training matrix (DESIGN's tf-idf protocol,
11,314 x 53,724, 1.5M non-zeros; ``--stack m`` stacks it m times), the minimum
over 5 batches of 50 calls of

* ``scipy``: ``X @ p`` then ``X.T @ (c * q)``, one thread;
* ``scipy x2 (py threads)``: the same over two row blocks, the second block
  on a Python thread (skssl before the compiled kernels);
* ``2 passes x2 (OpenMP)``: the two products over two row blocks by
  skssl's compiled kernels on two OpenMP threads (``RowBlocks @ p`` and
  ``RowBlocks.T @ z``, what the outputs of every Newton step use);
* ``fused``: :func:`skssl.svm._rowblocks.gram_product`, one pass, one thread;
* ``fused x2``: the same over two row blocks on two OpenMP threads (what
  CGLS runs with ``n_jobs=2``),

all alternating, with BLAS limited to one thread (the products are
sparse; BLAS is not used). Run it on an idle machine::

    python benchmarks/cgls_products.py ../shared/data [--stack 1]
"""

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skssl.datasets import load_20newsgroups_archive  # noqa: E402
from skssl.svm import _rowblocks  # noqa: E402
from skssl.svm._rowblocks import RowBlocks, gram_product, transposed  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=str(ROOT / ".." / "shared" / "data"))
    parser.add_argument("--stack", type=int, default=1)
    args = parser.parse_args()
    if _rowblocks.csr_gram_rows is None:
        sys.exit("The compiled kernel is not built (pip install -e . or python setup.py build_ext --inplace).")
    archive = Path(args.data_dir) / "20news-bydate.tgz"
    if not archive.exists():
        print(f"20 Newsgroups archive not found at {archive}; nothing to time.")
        return
    X = TfidfVectorizer(min_df=2).fit_transform(load_20newsgroups_archive(archive).data_train).tocsr()
    if args.stack > 1:
        X = sp.vstack([X] * args.stack, format="csr")
    n, d = X.shape
    rng = np.random.RandomState(0)
    p, cost, pb, p_norm = rng.randn(d), rng.rand(n), 0.3, 2.0
    XT = transposed(X)

    def scipy_products(A, AT):
        q = A @ p
        q += pb
        q /= p_norm
        return q, AT @ (cost * q)

    with ThreadPoolExecutor(2) as executor, threadpool_limits(1):
        blocks = RowBlocks(X, executor, 2)
        (a0, b0), (a1, b1) = blocks._bounds

        def python_threads():
            # skssl's products before the compiled kernels: scipy on block 0 here, block 1 on a pool thread.
            q = np.empty(n)

            def matvec(k, a, b):
                q[a:b] = blocks._blocks[k] @ p

            future = executor.submit(matvec, 1, a1, b1)
            matvec(0, a0, b0)
            future.result()
            q += pb
            q /= p_norm
            cq = cost * q
            future = executor.submit(lambda: blocks._blocks_t[1] @ cq[a1:b1])
            u = blocks._blocks_t[0] @ cq[a0:b0]
            u += future.result()
            return q, u

        methods = {
            "scipy": lambda: scipy_products(X, XT),
            "scipy x2 (py threads)": python_threads,
            "2 passes x2 (OpenMP)": lambda: scipy_products(blocks, blocks.T),
            "fused": lambda: gram_product(X, p, pb, p_norm, cost),
            "fused x2": lambda: gram_product(blocks, p, pb, p_norm, cost),
        }
        q_ref, u_ref = methods["scipy"]()
        for name, f in methods.items():
            q, u = f()[:2]
            assert np.array_equal(q, q_ref) and np.allclose(u, u_ref, rtol=1e-12, atol=1e-12), name
        best = dict.fromkeys(methods, np.inf)
        for _ in range(5):
            for name, f in methods.items():
                start = time.perf_counter()
                for _ in range(50):
                    f()
                best[name] = min(best[name], (time.perf_counter() - start) / 50)
    print(f"20 Newsgroups x{args.stack}: {n} x {d}, {X.nnz} non-zeros; ms per iteration's products (min of 5 x 50)")
    for name, t in best.items():
        print(f"{name:>21}: {1e3 * t:7.2f} ms  ({best['scipy'] / t:.2f}x scipy)")


if __name__ == "__main__":
    main()
