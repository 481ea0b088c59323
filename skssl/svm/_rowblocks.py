"""Row blocks of ``X`` for the compiled kernels' OpenMP threads, and the rows a Newton step cuts out of ``X``.

The solvers spend their time in ``X @ v`` and ``X.T @ z`` (CGLS, the outputs
after each Newton step), all of them in the compiled kernels
(:mod:`skssl.svm._kernels`). :class:`RowBlocks` splits ``X`` into the
contiguous row blocks those kernels run on their OpenMP threads (each block
keeps its own partial sums, added in block order); :class:`DenseRows` lists
the rows of a dense ``X`` that CGLS reads in place; :func:`fit_threads` sets
up a fit's threads and their :class:`~skssl.svm._kernels.ThreadSchedule`.

:class:`RowSlicer` copies the active rows ``X[J]`` of l2-SVM-MFN's Newton steps
of CSR ``X`` into buffers that the solves of one fit share.

Decisions
---------
* Blocks are contiguous row ranges with about the same number of non-zeros
  (a mat-vec costs one multiply-add per stored value); the kernels read
  them in ``X``'s own arrays, between the bounds
  (:attr:`RowBlocks.kernel_bounds`). (When the products ran on a Python
  thread pool, a block was a CSR matrix on views of ``X``'s arrays, and
  scipy's ``.T`` copied the data and indices of any block holding less than
  half of ``X``, which made ``n_jobs=2`` fits grow by 2.3-2.4x the CSR size
  of ``X`` (20NG and 20NG x7 TSVM) against 0.9-1.05x with one job.)
* Blocking is used only when every block would hold at least
  ``MIN_BLOCK_NNZ`` stored values: below that a thread hand-off (tens of
  microseconds) costs more than the product it saves.
* For CSR, ``X @ v`` is bitwise the same with or without blocks (each row's
  sum is computed the same way, as scipy's mat-vec computes it). ``X.T @ z``
  adds the blocks' partial sums in a fixed order, so for a given
  ``n_threads`` the result is deterministic; it differs from the unblocked
  product only by rounding (relative ~1e-16).
* One :class:`~skssl.svm._kernels.ThreadSchedule` per binary problem,
  activated by the solver entry point for its thread and deactivated with
  it (:func:`fit_threads`); nothing outlives a fit. The kernels run on
  OpenMP threads; Python starts none (an earlier version created a
  ``ThreadPoolExecutor`` that was never given work).
* **Compiled kernels for CSR** (``skssl/svm/_csr_kernels.pyx``, through
  :mod:`skssl.svm._kernels`). The blocks of a CSR matrix run on OpenMP
  threads inside one call that holds no GIL: ``X @ v`` here
  (``csr_matvec_blocks``) and the whole CGLS loop (``csr_cgls``, see
  :mod:`skssl.svm._mfn`), which takes :attr:`RowBlocks.kernel_bounds`. The
  first version handed block 1 to a Python pool thread per product: on 20
  Newsgroups one iteration's products took 1.50 ms that way and 1.16 ms on
  OpenMP threads (2.18 ms in one thread), and a two-thread TSVM fit spent
  an eighth of its wall time handing off and waiting. CGLS's two products
  per iteration, ``q = X p`` and ``X^T (C q)``, are moreover one pass over
  the rows: each row is read once instead of twice, which pays once ``X``
  outgrows the caches (20 Newsgroups stacked 7 times, 10.7M non-zeros:
  28.7 ms as scipy's two mat-vecs, 19.8 ms fused in one thread, 9.9 ms
  fused in two; on 20 Newsgroups itself 2.18 vs 2.27 ms in one thread and
  1.16 vs 1.17 ms in two: a wash). Minimum times on an idle machine,
  when the products were separate kernels; ``CHANGELOG.md`` gives the
  times of whole compiled CGLS iterations against scipy's products (the
  benchmark that measured them is retired). Each block writes its
  ``X_k^T z_k`` into its own vector and the vectors are added in block
  order, so results are deterministic for a given ``n_threads``. Dense
  ``X`` runs the same loop (``dense_cgls``) on its rows read in place by
  index (:class:`DenseRows`, see :mod:`skssl.svm._mfn`). The kernels are
  the only path: a source tree whose extension was not built cannot import
  :mod:`skssl.svm` (see :mod:`skssl.svm._kernels`). OpenMP's threads wait for work by spinning for a moment
  after each parallel loop, so a ``n_jobs=2`` fit uses more CPU time than
  wall time on both cores (on 20 Newsgroups TSVM: 3.2 CPU s for 1.6 s of
  wall time) while it finishes sooner.
* **How many threads run the blocks is chosen at run time**, per fit, by a
  :class:`~skssl.svm._kernels.ThreadSchedule` (in the compiled kernels),
  which :func:`fit_threads` makes and activates for the fit's thread (a
  context variable: the kernels called in that thread see it, a
  one-vs-rest problem in another thread has its own). Why: each CGLS
  iteration is three parallel loops, each ending at a barrier. libgomp's
  waiting threads spin (``GOMP_SPINCOUNT``, 300,000 spins unless
  ``OMP_WAIT_POLICY`` says otherwise; both are read once when the library
  loads, and skssl sets no environment variable) and then sleep. When
  other processes keep every core busy, one of the fit's two threads is
  often descheduled while the other waits for it, and a barrier can cost a
  scheduler time slice: on 20 Newsgroups (2 cores, a busy loop per core,
  other jobs running too) ``n_jobs=2`` took 3.4x the wall time of
  ``n_jobs=1`` for TSVM (136 s against 40 s, medians of 3) and 3.7x for DA
  (258 s against 71 s), whose p-step also calls ``belief_mean`` a dozen
  times; with the schedule 0.96x and 1.04x, at 1.04-1.05x the CPU time,
  and bitwise the same ``coef_``. The number of *blocks* follows ``n_jobs``
  and fixes the order of every sum; each block keeps its own partial sums,
  so running the same blocks on fewer threads gives bitwise the same
  result, and the thread count is free to change between any two
  iterations. The rule: a *probe* runs pairs of CGLS iterations, one on one
  thread and the next on all (3 pairs; a pair cut by the end of a CGLS call
  is dropped), on the fit's own solves; one thread wins when its summed
  time is at most 0.8 times that of all threads, else all threads do (on an
  idle machine an even rule let timing noise send 577 of 3,597 iterations
  of a 20 Newsgroups TSVM fit to one thread, and ``n_jobs=2`` took 0.73 of
  ``n_jobs=1``'s wall time instead of 0.61; on a busy machine one thread
  was three times faster). The winner is kept until its iterations have taken 50 times the
  probe's cost (the loser's excess time, at least the winner's own time),
  which bounds the probes' share of CGLS's time to about 2%; then the next
  probe. A fit starts on all threads and probes in its first iterations.
  ``csr_matvec_blocks``, ``csr_matvec_subset`` and DA's ``belief_mean``
  follow the current choice (they are too short to time). Only one thread
  or all are tried (with ``n_jobs=4`` on a half-busy machine two might be
  best). :data:`THREAD_MODE` ``= "fixed"`` restores the fixed thread count
  (for benchmarks). Measured on 20 Newsgroups (500 labels, 3 repeats,
  median wall time of ``n_jobs=2`` over ``n_jobs=1``): with one busy loop
  per core, TSVM 1.08 and DA 0.83 (fixed threads: 1.69 and 1.44, with
  outliers of 45 and 111 s); idle, TSVM 0.59 and DA 0.66 (fixed: 0.67 and
  0.61); every ``coef_`` bitwise that of the fixed count (a benchmark
  since retired; ``CHANGELOG.md`` records these figures).
* **Memory: one slice buffer per fit.** The goal is a fit that adds at most
  the CSR size of ``X`` (data + indices + indptr) to the memory ``X`` itself
  takes. The slice is the only large allocation, and two things made it
  count twice: ``XJ = X[J]`` built the new slice while the previous step's
  was still bound to ``XJ``, and scipy's fresh arrays for every slice let
  freed ones pile up in the allocator (20 Newsgroups stacked 7 times, 10.7M
  nnz: TSVM's RSS grew by 1.65x the CSR size; tracemalloc showed two slices
  of ~0.73 of the non-zeros alive at once). Now :class:`RowSlicer` copies the
  active rows with scipy's own row-gather kernel (``csr_row_index``, what
  ``X[J]`` runs; a private name, so ``X[J]`` is the fallback) into buffers
  that the solves of one fit share, replaced only when a larger slice comes.
  The fit's extra memory is then the largest slice (at most
  ``SLICE_FRACTION`` of the data and indices) plus vectors of the length of
  the rows and features. (:func:`~skssl.svm._validation.check_design_scale` took ``abs`` of all
  values, a copy of the data, 2/3 of the CSR size: the peak of a DA fit,
  which rarely slices; it now takes ``max`` and ``-min``.) RSS growth during
  ``fit`` / CSR size, before -> after (``benchmarks/linear_scaling.py``;
  ``benchmarks/results/linear_scaling_memory.md``): 20NG x7 TSVM 1.65 ->
  0.93, RCV1-shaped 200k rows TSVM 1.05 -> 0.67. Writing into a buffer whose pages are already
  mapped is also cheaper: on 20NG x7, 75% of the rows, ``X[J]`` took 130-220
  ms when its arrays were freshly mapped and ~25 ms otherwise, the buffered
  gather 16 ms (one mat-vec: 15 ms).
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

#: How a fit's OpenMP threads are chosen (:class:`~skssl.svm._kernels.ThreadSchedule`'s ``mode``):
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
    """``X`` split into the row blocks on which the compiled kernels run their OpenMP threads.

    Supports ``A @ v`` and ``A.shape`` like the matrix it wraps.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data (a C-contiguous ndarray when dense), not copied.
    n_blocks : int
        Number of blocks (at least 2).
    """

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

    Row ``i`` of this matrix is ``X[rows[i]]``; the kernels read it where it
    is (no slice of ``X`` is cut). The rows are split into contiguous
    blocks, ``bounds[k]:bounds[k + 1]``, of at least :data:`MIN_BLOCK_NNZ`
    values each and at most ``n_blocks`` (the fit's threads), as
    :func:`row_blocks` splits ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        C-contiguous float64 data, not copied.
    rows : ndarray of intp
        Rows of ``X``, in the order of this matrix.
    n_blocks : int
        Most blocks.
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
    instead of letting scipy allocate a new matrix each time (see the module's
    decisions). The buffers are replaced by larger ones when a larger slice
    comes, so they hold the largest slice of the fit so far and no more. A
    matrix returned by ``take`` is a view of the buffers, valid until the next
    ``take``.
    """

    def __init__(self):
        self._data = None
        self._indices = None
        self._indptr = None

    def take(self, X, J, J_nnz):
        """Return the rows ``J`` (sorted) of ``X`` as a matrix that views this object's buffers.

        Parameters
        ----------
        X : csr sparse matrix of shape (n_rows, n_features)
            Float64 data (dense ``X`` is never sliced: CGLS reads its rows in place, see :class:`DenseRows`).
        J : ndarray of int
            Increasing row indices.
        J_nnz : ndarray of int
            Non-zeros of each of those rows.

        Returns
        -------
        XJ : csr sparse matrix of shape (len(J), n_features)
        """
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

    ``None`` when ``A`` is not CSR (dense rows go to the kernels as :class:`DenseRows`).

    Parameters
    ----------
    A : {csr sparse matrix, ndarray, RowBlocks}

    Returns
    -------
    rows : tuple of (csr sparse matrix, ndarray of intp) or None
        ``bounds[k]:bounds[k + 1]`` are the rows of block ``k``.
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
    """``X`` wrapped in :class:`RowBlocks` when blocking pays off, else ``X`` itself.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data.
    schedule : ThreadSchedule or None
        The fit's active thread schedule (see :func:`fit_threads`); ``None`` means no blocking.
    n_threads : int
        Threads of the fit (the most blocks).

    Returns
    -------
    A : RowBlocks or the input
    """
    if schedule is None or n_threads < 2:
        return X
    nnz = X.nnz if sp.issparse(X) else X.size
    n_blocks = min(n_threads, int(nnz // MIN_BLOCK_NNZ), X.shape[0])
    if n_blocks < 2:
        return X
    return RowBlocks(X, n_blocks)


def share_threads(n_jobs, n_problems):
    """Split ``n_jobs`` threads between independent problems and the row blocks of each.

    Problems first (they need no synchronisation); the threads left go to
    each problem's row-block products.

    Parameters
    ----------
    n_jobs : int or None
        Threads, in joblib's convention (``None``: 1, -1: all cores).
    n_problems : int
        Number of independent problems (one-vs-rest problems, Potts classes).

    Returns
    -------
    n_outer : int
        Problems solved at once: ``min(n_jobs, n_problems)`` (at least 1).
    n_inner : int
        Threads of each for its row-block products: ``n_jobs // n_outer``.
    """
    n_total = effective_n_jobs(n_jobs)
    n_outer = max(1, min(n_total, n_problems))
    return n_outer, max(1, n_total // n_outer)


@contextmanager
def fit_threads(n_threads):
    """A fit's threads: its OpenMP thread schedule, active for the calling thread.

    Inside the ``with`` block the compiled kernels run their row blocks on
    the number of threads a :class:`~skssl.svm._kernels.ThreadSchedule` of
    mode :data:`THREAD_MODE` chooses (see the module's decisions). If the
    kernels were compiled without OpenMP, the first such schedule of the
    process warns that the blocks run on one core
    (:func:`~skssl.svm._kernels.warn_if_no_openmp`).

    Parameters
    ----------
    n_threads : int
        Number of threads.

    Yields
    ------
    schedule : ThreadSchedule or None
        ``None`` when ``n_threads < 2``; deactivated on exit.
    """
    if n_threads < 2:
        yield None
        return
    warn_if_no_openmp(n_threads)
    with ThreadSchedule(n_threads, mode=THREAD_MODE) as schedule:
        yield schedule
