"""What a block of k directions saves over k separate products with the same ``X``, the bound of a block CGLS::

    python benchmarks/block_products.py [--repeats 7] [--allow-dirty]

A CGLS iteration of l2-SVM-MFN costs two products with the rows of its Newton system, ``X @ v`` and
``X.T @ z``. Solving k systems on the same ``X`` together (the folds, candidates and halves of a default fit)
could replace each of the k products by one product with k columns, which reads ``X`` once. This script times
both on the ``X`` of the three sets of ``defaults_profile.py`` (the text set as CSR, the tables dense, as the
solvers see them): k separate products against one with k columns, for k = 1, 2, 4, 8, with scipy's sparse
products and numpy's (BLAS held to one thread, as one row block of the kernels runs), the minimum over
``--repeats`` of the mean of a batch of calls.

``gain`` is the time of the k separate products over that of the one block product: the most that sharing the
passes over ``X`` could save on the products of k systems in lock step (their other work, the Newton steps' line
searches and active sets, is not shared). scipy's CSR times a block of columns (``X @ v`` on the text set) has a
fixed cost of its own; ``X.T @ z`` there, and both products on the dense tables, show what reading ``X`` once
per block saves.
"""

import argparse
import timeit

import numpy as np
import scipy.sparse as sp
from _harness import RESULTS_DIR, ResultsFile, add_allow_dirty, markdown_table, provenance
from defaults_profile import load_split
from threadpoolctl import threadpool_limits

SETS = ("ng-med-space", "winequality-white", "abalone")
BLOCK_SIZES = (1, 2, 4, 8)
#: Calls per timed batch: enough for a batch of about 10 ms on the smallest ``X``.
BATCH = 200


def _seconds(call, repeats):
    """The minimum over ``repeats`` batches of the mean time of one ``call``."""
    return min(timeit.repeat(call, number=BATCH, repeat=repeats)) / BATCH


def _products(X, k, repeats, rng):
    """Seconds of k separate products and of one with k columns, ``{direction: (separate, block)}``."""
    Z = np.asfortranarray(rng.standard_normal((X.shape[0], k)))
    V = np.asfortranarray(rng.standard_normal((X.shape[1], k)))
    Xt = X.T  # a view (CSC for a CSR X): no copy
    out = {}
    for direction, A, W in (("X.T @ z", Xt, Z), ("X @ v", X, V)):
        columns = [np.ascontiguousarray(W[:, j]) for j in range(k)]

        def separate(A=A, columns=columns):
            for w in columns:
                A @ w

        out[direction] = _seconds(separate, repeats), _seconds(lambda A=A, W=W: A @ W, repeats)
    return out


def run(repeats):
    rng = np.random.default_rng(0)
    rows = []
    for name in SETS:
        X, _ = load_split(name)
        X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        kind = f"CSR, {X.nnz} non-zeros" if sp.issparse(X) else "dense"
        for k in BLOCK_SIZES:
            with threadpool_limits(1):
                timings = _products(X, k, repeats, rng)
            for direction, (separate, block) in timings.items():
                cells = [name, f"{X.shape[0]} x {X.shape[1]}, {kind}", str(k), f"`{direction}`"]
                cells += [f"{1e6 * separate:.1f}", f"{1e6 * block:.1f}", f"{separate / block:.2f}"]
                print(" | ".join(cells), flush=True)
                rows.append(cells)
    header = ["set", "X", "k", "product", "k separate µs", "one block µs", "gain"]
    return markdown_table(header, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="timed batches per figure (the minimum is kept)")
    add_allow_dirty(parser)
    args = parser.parse_args()
    reduced = [f"--repeats {args.repeats} (full run: 7)"] if args.repeats < 7 else []
    results = ResultsFile(RESULTS_DIR / "block_products.md", reduced=reduced, allow_dirty=args.allow_dirty)
    table = run(args.repeats)
    text = (
        "# A block of k directions against k separate products with the same X\n\n"
        "Written by `benchmarks/block_products.py` (its docstring gives the protocol). `X.T @ z` and `X @ v` "
        "are the two products of a CGLS iteration; `gain`: the k separate products' time over the block's, the "
        "most a block CGLS of k systems in lock step could save on that product.\n\n"
        f"{provenance()}\n\n{table}"
    )
    path = results.finish(text)
    print(path.read_text())


if __name__ == "__main__":
    main()
