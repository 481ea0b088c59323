"""Sparse (and dense) products over row blocks in threads.

The solvers spend their time in ``X @ v`` and ``X.T @ z`` (CGLS, the outputs
after each Newton step). scipy's sparse mat-vec and numpy's dense one release
the GIL, so threads that each take a block of rows run them in parallel
without copying ``X``: ``X @ v`` is the concatenation of the blocks' products
and ``X.T @ z`` the sum of the blocks' ``X_k.T @ z_k``.

Decisions
---------
* Blocks are contiguous row ranges with about the same number of non-zeros
  (a mat-vec costs one multiply-add per stored value). A block of a CSR
  matrix shares ``data`` and ``indices`` with ``X`` (views); only its
  ``indptr`` (one integer per row) is new. Dense blocks are row views.
  Their transposes are built on the same arrays (:func:`transposed`):
  scipy's ``.T`` copied the data and indices of any block holding less than
  half of ``X``, which made ``n_jobs=2`` fits grow by 2.3-2.4x the CSR size
  of ``X`` (20NG and 20NG x7 TSVM) against 0.9-1.05x with one job.
* Blocking is used only when every block would hold at least
  ``MIN_BLOCK_NNZ`` stored values: below that a thread hand-off (tens of
  microseconds) costs more than the product it saves.
* For CSR, ``X @ v`` is bitwise the same with or without blocks (each row's
  sum is computed the same way; for dense rows BLAS may reorder it). ``X.T @ z`` adds the blocks' partial sums in a
  fixed order, so for a given ``n_threads`` the result is deterministic; it
  differs from the unblocked product only by rounding (relative ~1e-16).
* One ``ThreadPoolExecutor`` per binary problem, created by the solver entry
  point and shut down with it; nothing outlives a fit. The calling thread
  computes the first block itself, so ``n_jobs=2`` costs one hand-off per
  product (its pool needs ``n_threads - 1`` workers, but keeps ``n_threads``
  so a one-vs-rest worker can never starve it).
* CGLS's two products per iteration, ``q = X p`` and ``X^T (C q)``, are one
  fused pass over the rows of a CSR matrix (:func:`gram_product`, compiled in
  ``skssl/svm/_csr_kernels.pyx``): each row is read from memory once instead
  of twice. Minimum time of one iteration's products on an idle machine
  (``benchmarks/cgls_products.py``), scipy's two mat-vecs vs the fused
  pass: 20 Newsgroups (1.5M non-zeros) 2.09 vs 2.08 ms in one thread and
  1.48 vs 1.24 ms in two; stacked 7 times (10.7M) 28.2 vs 19.1 ms in one
  thread and 13.7 vs 9.5 ms in two. Each block accumulates its
  ``X_k^T (C q)_k`` in its own vector and the blocks' vectors are added in
  block order (deterministic for a given ``n_threads``). Dense ``X`` keeps
  BLAS's two products; a source tree whose kernel was not compiled falls
  back to scipy's two mat-vecs (``skssl.show_versions()`` says which).
"""

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp

try:
    from ._csr_kernels import csr_gram_rows
except ImportError:  # a source checkout that was never built: scipy's two mat-vecs instead
    csr_gram_rows = None

__all__ = ["MIN_BLOCK_NNZ", "RowBlocks", "gram_product", "row_blocks", "thread_pool", "transposed"]

#: Fewest stored values per block for blocking to pay off.
MIN_BLOCK_NNZ = 50_000


def _block_bounds(X, n_blocks):
    n_rows = X.shape[0]
    if sp.issparse(X):
        targets = X.indptr[-1] * np.arange(1, n_blocks) / n_blocks
        cuts = np.searchsorted(X.indptr, targets)
    else:
        cuts = (n_rows * np.arange(1, n_blocks)) // n_blocks
    bounds = np.unique(np.concatenate([[0], cuts, [n_rows]]))
    return list(zip(bounds[:-1], bounds[1:]))


def _row_block(X, start, stop):
    if not sp.issparse(X):
        return X[start:stop]
    lo, hi = X.indptr[start], X.indptr[stop]
    # The constructor copies data and indices even with copy=False (scipy
    # 1.17); an empty matrix given views of X's arrays does not.
    block = sp.csr_matrix((stop - start, X.shape[1]), dtype=X.dtype)
    block.indptr = (X.indptr[start : stop + 1] - lo).astype(X.indptr.dtype, copy=False)
    block.indices = X.indices[lo:hi]
    block.data = X.data[lo:hi]
    return block


def transposed(A):
    """``A.T`` that never copies: for CSR, a CSC matrix on ``A``'s own arrays.

    scipy's ``.T`` runs the constructor's format check, which copies
    ``data`` and ``indices`` when they are views of less than half of a
    larger array (``_prune_array``): exactly what a row block of ``X`` or a
    slice in a reused buffer is.

    Parameters
    ----------
    A : {csr sparse matrix, ndarray}

    Returns
    -------
    AT : {csc sparse matrix, ndarray}
    """
    if not sp.issparse(A):
        return A.T
    AT = sp.csc_matrix(A.shape[::-1], dtype=A.dtype)
    AT.indptr, AT.indices, AT.data = A.indptr, A.indices, A.data
    return AT


class _Transposed:
    def __init__(self, parent):
        self._parent = parent
        self.shape = parent.shape[::-1]

    def __matmul__(self, z):
        return self._parent.rmatvec(z)


class RowBlocks:
    """``X`` split into row blocks whose products run on a thread pool.

    Supports ``A @ v``, ``A.T @ z`` and ``A.shape`` like the matrix it wraps.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data, not copied.
    executor : concurrent.futures.Executor
        The pool that runs the blocks.
    n_blocks : int
        Number of blocks (at least 2).
    """

    def __init__(self, X, executor, n_blocks):
        self.X = X
        self.shape = X.shape
        self._executor = executor
        bounds = _block_bounds(X, n_blocks)
        self._bounds = bounds
        self._blocks = [_row_block(X, a, b) for a, b in bounds]
        self._blocks_t = [transposed(blk) for blk in self._blocks]

    @property
    def T(self):
        return _Transposed(self)

    def _run(self, work):
        # Block 0 runs in the calling thread while the pool runs the others:
        # one hand-off fewer per product, and the caller does not sit idle.
        futures = [self._executor.submit(work, k) for k in range(1, len(self._blocks))]
        first = work(0)
        return [first] + [f.result() for f in futures]

    def __matmul__(self, v):
        out = np.empty(self.shape[0])

        def work(k):
            a, b = self._bounds[k]
            out[a:b] = self._blocks[k] @ v

        self._run(work)
        return out

    def rmatvec(self, z):
        """``X.T @ z`` as the sum, in block order, of the blocks' products."""
        parts = self._run(lambda k: self._blocks_t[k] @ z[self._bounds[k][0] : self._bounds[k][1]])
        total = parts[0]
        for part in parts[1:]:
            total += part
        return total

    def gram(self, p, pb, p_norm, cost):
        """CGLS's products over the blocks; see :func:`gram_product`."""
        if not _fused(self.X):
            return _gram_two_products(self, p, pb, p_norm, cost)
        X = self.X
        indptr = _indptr_like_indices(X)
        q = np.empty(self.shape[0])

        def work(k):
            a, b = self._bounds[k]
            out = np.zeros(self.shape[1])
            return out, csr_gram_rows(X.data, X.indices, indptr, a, b, p, pb, p_norm, cost, q, out)

        parts = self._run(work)
        u, (cq_sum, qcq) = parts[0]
        for out, (s, c) in parts[1:]:
            u += out
            cq_sum += s
            qcq += c
        return q, u, cq_sum, qcq


def _fused(X):
    return csr_gram_rows is not None and sp.issparse(X) and X.format == "csr"


def _indptr_like_indices(X):
    # The kernel takes indices and indptr of one integer type; scipy keeps them equal.
    return X.indptr if X.indptr.dtype == X.indices.dtype else X.indptr.astype(X.indices.dtype)


def _gram_two_products(A, p, pb, p_norm, cost):
    q = A @ p
    q += pb
    q /= p_norm
    cq = cost * q
    return q, A.T @ cq, float(cq.sum()), float(q @ cq)


def gram_product(A, p, pb, p_norm, cost):
    """CGLS's two products on the rows of ``A`` (a matrix or :class:`RowBlocks`), fused for CSR.

    Parameters
    ----------
    A : {csr sparse matrix, ndarray, RowBlocks} of shape (n_rows, n_features)
        The rows.
    p : ndarray of shape (n_features,)
        Direction (contiguous float64).
    pb : float
        Its bias component.
    p_norm : float
        The divisor of the outputs (CGLS's ``|(p, pb)|``).
    cost : ndarray of shape (n_rows,)
        Row costs ``c``.

    Returns
    -------
    q : ndarray of shape (n_rows,)
        ``(A @ p + pb) / p_norm``.
    u : ndarray of shape (n_features,)
        ``A.T @ (c * q)``.
    cq_sum : float
        ``sum(c * q)``, the bias component of ``[A, 1]^T (c * q)``.
    qcq : float
        ``q @ (c * q)``.
    """
    if isinstance(A, RowBlocks):
        return A.gram(p, pb, p_norm, cost)
    if not _fused(A):
        return _gram_two_products(A, p, pb, p_norm, cost)
    q = np.empty(A.shape[0])
    u = np.zeros(A.shape[1])
    cq_sum, qcq = csr_gram_rows(A.data, A.indices, _indptr_like_indices(A), 0, A.shape[0], p, pb, p_norm, cost, q, u)
    return q, u, cq_sum, qcq


def row_blocks(X, executor, n_threads):
    """``X`` wrapped in :class:`RowBlocks` when blocking pays off, else ``X`` itself.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data.
    executor : concurrent.futures.Executor or None
        The pool; ``None`` means no blocking.
    n_threads : int
        Threads of the pool (the number of blocks).

    Returns
    -------
    A : RowBlocks or the input
    """
    if executor is None or n_threads < 2:
        return X
    nnz = X.nnz if sp.issparse(X) else X.size
    n_blocks = min(n_threads, int(nnz // MIN_BLOCK_NNZ), X.shape[0])
    if n_blocks < 2:
        return X
    return RowBlocks(X, executor, n_blocks)


def thread_pool(n_threads):
    """A ``ThreadPoolExecutor`` of ``n_threads`` as a context manager, or ``None`` for one thread.

    Parameters
    ----------
    n_threads : int
        Number of threads.

    Returns
    -------
    context : context manager
        Yields the executor (``None`` when ``n_threads < 2``) and shuts it down on exit.
    """
    return ThreadPoolExecutor(n_threads) if n_threads > 1 else nullcontext()
