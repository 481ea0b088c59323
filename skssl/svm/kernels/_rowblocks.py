"""Row blocks of ``X`` for the compiled kernels' OpenMP threads, and the rows a Newton step cuts out of ``X``.

The solvers spend their time in ``X @ v`` and ``X.T @ z``, all of them in
the compiled kernels (:mod:`skssl.svm.kernels._kernels`). :class:`RowBlocks` splits
``X`` into contiguous row blocks of about equal non-zeros that those kernels
run on their OpenMP threads (each block keeps its own partial sums, added in
block order, so results are deterministic for a given ``n_jobs``);
:class:`DenseRows` lists the rows of a dense ``X`` that CGLS reads in place;
:func:`fit_threads` sets up a fit's threads and the
:class:`~skssl.svm.kernels._kernels.ThreadSchedule` that picks, at run time, how many
threads run the blocks (:data:`THREAD_MODE` ``= "fixed"`` turns that off).
:class:`RowSlicer` copies the active rows ``X[J]`` of l2-SVM-MFN's Newton
steps on CSR ``X`` into buffers that the solves of one fit share.

Design decisions: user guide, Implementation decisions: linear S3VMs, "Compiled kernels and threads".
"""

from contextlib import contextmanager
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs

from ._kernels import ThreadSchedule, csr_matvec_blocks, dense_matvec_subset, warn_if_no_openmp

try:  # the kernel behind scipy's X[J] on CSR; private, so optional (see RowSlicer)
    from scipy.sparse._sparsetools import csr_row_index as _csr_row_index
except ImportError:  # pragma: no cover - a scipy that moved it: fall back to X[J]
    _csr_row_index = None

__all__ = [
    "MIN_BLOCK_NNZ",
    "THREAD_MODE",
    "DenseRows",
    "RowBlocks",
    "RowSlicer",
    "kernel_rows",
    "row_blocks",
    "fit_threads",
]

#: Fewest stored values per block for blocking to pay off.
MIN_BLOCK_NNZ = 50_000

#: How a fit's OpenMP threads are chosen (:class:`~skssl.svm.kernels._kernels.ThreadSchedule`'s ``mode``):
#: ``"adaptive"`` times CGLS's iterations on one thread and on all and keeps the faster; ``"fixed"``
#: always runs all ``n_jobs`` threads (the behaviour before, kept for benchmarks).
THREAD_MODE = "adaptive"


def _block_bounds(X, n_blocks):
    n_rows = X.shape[0]
    if sp.issparse(X):
        targets = X.indptr[-1] * np.arange(1, n_blocks) / n_blocks
        cuts = np.searchsorted(X.indptr, targets)
    else:
        cuts = (n_rows * np.arange(1, n_blocks)) // n_blocks
    bounds = np.unique(np.concatenate([[0], cuts, [n_rows]]))
    return list(zip(bounds[:-1], bounds[1:]))


class RowBlocks:
    """``X`` (float64, not copied) split into ``n_blocks >= 2`` row blocks for the kernels; supports ``A @ v``."""

    def __init__(self, X, n_blocks):
        self.X = X
        self.shape = X.shape
        self._bounds = _block_bounds(X, n_blocks)

    @cached_property
    def kernel_bounds(self):
        """The blocks as the compiled kernels take them: block ``k`` is rows ``bounds[k]:bounds[k + 1]``."""
        return np.array([a for a, _ in self._bounds] + [self._bounds[-1][1]], dtype=np.intp)

    def __matmul__(self, v):
        out = np.empty(self.shape[0])
        X, bounds = self.X, self.kernel_bounds
        if sp.issparse(X):
            csr_matvec_blocks(X.data, X.indices, indptr_like_indices(X), bounds, v, out, len(bounds) - 1)
        else:
            dense_matvec_subset(X, np.arange(X.shape[0], dtype=np.intp), v, 0.0, out, len(bounds) - 1)
        return out


class DenseRows:
    """The rows ``rows`` of a C-contiguous dense ``X``, for the compiled dense kernels, without a copy.

    Row ``i`` is ``X[rows[i]]``, read where it is. The rows are split into at
    most ``n_blocks`` contiguous blocks ``bounds[k]:bounds[k + 1]`` of at least
    :data:`MIN_BLOCK_NNZ` values, as :func:`row_blocks` splits ``X``.
    """

    def __init__(self, X, rows, n_blocks):
        self.X = X
        self.rows = rows
        self.shape = (rows.size, X.shape[1])
        n_blocks = max(1, min(n_blocks, rows.size * X.shape[1] // MIN_BLOCK_NNZ, rows.size))
        self.n_blocks = int(n_blocks)
        self.bounds = (rows.size * np.arange(self.n_blocks + 1, dtype=np.intp)) // self.n_blocks


class RowSlicer:
    """Reusable storage for the active rows ``X[J]`` that the Newton steps of one fit cut.

    ``take`` copies the rows into buffers kept from one call to the next
    instead of letting scipy allocate a new matrix each time. The buffers
    are replaced by larger ones when a larger slice comes, so they hold the
    largest slice of the fit so far and no more. A matrix returned by
    ``take`` is a view of the buffers, valid until the next ``take``.
    """

    def __init__(self):
        self._data = None
        self._indices = None
        self._indptr = None

    def take(self, X, J, J_nnz):
        """The increasing rows ``J`` of CSR ``X`` (``J_nnz`` non-zeros each) as a CSR view of the buffers."""
        idx_dtype = X.indices.dtype
        nnz_J = int(J_nnz.sum())
        if _csr_row_index is None or X.indptr.dtype != idx_dtype:
            return X[J]
        if self._data is None or self._data.size < nnz_J or self._indices.dtype != idx_dtype:
            self._data = self._indices = None  # release before the next allocation
            self._data = np.empty(nnz_J)
            self._indices = np.empty(nnz_J, dtype=idx_dtype)
        if self._indptr is None or self._indptr.size < J.size + 1 or self._indptr.dtype != idx_dtype:
            self._indptr = np.empty(X.shape[0] + 1, dtype=idx_dtype)
        indptr = self._indptr[: J.size + 1]
        indptr[0] = 0
        np.cumsum(J_nnz, out=indptr[1:])
        data, indices = self._data[:nnz_J], self._indices[:nnz_J]
        _csr_row_index(J.size, J.astype(idx_dtype, copy=False), X.indptr, X.indices, X.data, indices, data)
        XJ = sp.csr_matrix((J.size, X.shape[1]), dtype=X.dtype)
        XJ.indptr, XJ.indices, XJ.data = indptr, indices, data
        return XJ


def kernel_rows(A):
    """``(X, bounds)`` for the compiled kernels: the CSR matrix behind ``A`` and its row blocks, or ``None``.

    ``None`` when ``A`` is not CSR (dense rows go to the kernels as
    :class:`DenseRows`); ``bounds[k]:bounds[k + 1]`` are the rows of block ``k``.
    """
    if isinstance(A, RowBlocks):
        return (A.X, A.kernel_bounds) if _is_csr(A.X) else None
    return (A, np.array([0, A.shape[0]], dtype=np.intp)) if _is_csr(A) else None


def _is_csr(X):
    return sp.issparse(X) and X.format == "csr"


def indptr_like_indices(X):
    # The kernel takes indices and indptr of one integer type; scipy keeps them equal.
    return X.indptr if X.indptr.dtype == X.indices.dtype else X.indptr.astype(X.indices.dtype)


def row_blocks(X, schedule, n_threads):
    """``X`` wrapped in :class:`RowBlocks` of at most ``n_threads`` blocks when blocking pays off, else ``X`` itself.

    Without a ``schedule`` (the fit's active :class:`~skssl.svm.kernels._kernels.ThreadSchedule`) nothing is blocked.
    """
    if schedule is None or n_threads < 2:
        return X
    nnz = X.nnz if sp.issparse(X) else X.size
    n_blocks = min(n_threads, int(nnz // MIN_BLOCK_NNZ), X.shape[0])
    if n_blocks < 2:
        return X
    return RowBlocks(X, n_blocks)


def share_threads(n_jobs, n_problems):
    """Split ``n_jobs`` threads (joblib's convention) between ``n_problems`` independent problems and their row blocks.

    Returns ``(n_outer, n_inner)``: ``min(n_jobs, n_problems)`` problems at once
    (at least 1), and ``n_jobs // n_outer`` threads for each one's row blocks.
    """
    n_total = effective_n_jobs(n_jobs)
    n_outer = max(1, min(n_total, n_problems))
    return n_outer, max(1, n_total // n_outer)


@contextmanager
def fit_threads(n_threads):
    """A fit's ``n_threads`` threads: its OpenMP thread schedule, active for the calling thread.

    Inside the ``with`` block the compiled kernels run their row blocks on the
    number of threads a :class:`~skssl.svm.kernels._kernels.ThreadSchedule` of mode
    :data:`THREAD_MODE` chooses; kernels built without OpenMP warn once
    (:func:`~skssl.svm.kernels._kernels.warn_if_no_openmp`). Yields the schedule, or
    ``None`` when ``n_threads < 2``.
    """
    if n_threads < 2:
        yield None
        return
    warn_if_no_openmp(n_threads)
    with ThreadSchedule(n_threads, mode=THREAD_MODE) as schedule:
        yield schedule
