"""Memory and time of a default fit on wide sparse rows, against the size of ``coef_``::

    python benchmarks/wide_sparse_memory.py [--before PATH] [--out FILE]

The problem (issue 51): 1,500 CSR rows of 400,000 features, 20 non-zeros each (half drawn from a pool of 200
features of the row's class, half anywhere), 10% of the rows labeled. ``PottsDeterministicAnnealingSVC()``
fits 3 classes, ``TransductiveSVC()`` and ``DeterministicAnnealingSVC()`` 2, all with their defaults. Each fit
runs in its own child process; reported: the growth of the traced Python heap during ``fit`` at its peak
(``tracemalloc``, which sees numpy's arrays) against ``coef_`` (``n_classes x n_features`` float64) and the CSR
bytes of ``X``, the CPU seconds of ``fit`` and the accuracy of ``transduction_``. Goal: growth <= 4 x coef_ +
X. ``--before PATH`` adds the same fits with skssl imported from ``PATH`` (another checkout) for comparison.
"""

import argparse
import gc
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp
from _harness import RESULTS_DIR, ResultsFile, markdown_table, provenance, run_in_child

import skssl.svm

N_ROWS, N_FEATURES, NNZ_PER_ROW = 1500, 400_000, 20
ESTIMATORS = {"PottsDeterministicAnnealingSVC": 3, "TransductiveSVC": 2, "DeterministicAnnealingSVC": 2}


def wide_problem(n_rows, n_features, n_classes, nnz_per_row=NNZ_PER_ROW, seed=0):
    """``(X, y, y_semi)``: the problem of the module docstring."""
    rng = np.random.RandomState(seed)
    y = rng.randint(n_classes, size=n_rows)
    pool, n_signal = 200, nnz_per_row // 2
    cols = np.empty((n_rows, nnz_per_row), dtype=np.int64)
    for i in range(n_rows):
        signal = y[i] * pool + rng.choice(pool, n_signal, replace=False)
        rest = n_classes * pool + rng.choice(n_features - n_classes * pool, nnz_per_row - n_signal, replace=False)
        cols[i] = np.sort(np.concatenate([signal, rest]))
    indptr = np.arange(0, n_rows * nnz_per_row + 1, nnz_per_row)
    X = sp.csr_matrix((rng.rand(n_rows * nnz_per_row), cols.ravel(), indptr), shape=(n_rows, n_features))
    y_semi = np.full(n_rows, -1)
    lab = rng.choice(n_rows, n_rows // 10, replace=False)
    y_semi[lab] = y[lab]
    return X, y, y_semi


def measure(name, n_classes):
    """One default fit (in a child): traced peak growth, coef_ and X bytes, CPU seconds, accuracy."""
    X, y, y_semi = wide_problem(N_ROWS, N_FEATURES, n_classes)
    est = getattr(skssl.svm, name)()
    gc.collect()
    tracemalloc.start()
    start = time.process_time()
    est.fit(X, y_semi)
    cpu = time.process_time() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return {
        "peak": peak,
        "coef": est.coef_.nbytes,
        "x": x_bytes,
        "cpu": cpu,
        "accuracy": float(np.mean(est.transduction_ == y)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", help="a checkout of the old code, measured the same way")
    parser.add_argument("--out", help="results file (default: results/wide_sparse_memory.md)")
    args = parser.parse_args()
    results = ResultsFile(RESULTS_DIR / "wide_sparse_memory.md", args.out)
    rows = []
    for name, n_classes in ESTIMATORS.items():
        for label, path in [("before", args.before), ("this checkout", None)]:
            if label == "before" and path is None:
                continue
            r = run_in_child(measure, name, n_classes, pythonpath=path)
            mib = 2**20
            rows.append(
                [
                    name,
                    n_classes,
                    label,
                    f"{r['peak'] / mib:.1f}",
                    f"{r['coef'] / mib:.2f}",
                    f"{r['peak'] / r['coef']:.2f}",
                    "yes" if r["peak"] <= 4 * r["coef"] + r["x"] else "no",
                    f"{r['cpu']:.1f}",
                    f"{r['accuracy']:.3f}",
                ]
            )
            print(rows[-1], flush=True)
    header = ["estimator", "classes", "code", "peak growth (MiB)", "coef_ (MiB)", "peak / coef_", "<= 4 coef_ + X"]
    header += ["CPU s", "transduction accuracy"]
    text = (
        "# Memory of a default fit on wide sparse rows\n\n"
        + provenance()
        + f"\n\n{N_ROWS:,} x {N_FEATURES:,} CSR, {NNZ_PER_ROW} non-zeros per row (X: "
        + f"{N_ROWS * NNZ_PER_ROW * 12 / 2**20:.2f} MiB), 10% labeled; the problem and the measure are in "
        + "`benchmarks/wide_sparse_memory.py`.\n\n"
        + markdown_table(header, rows)
        + "\n"
    )
    results.finish(text)


if __name__ == "__main__":
    main()
