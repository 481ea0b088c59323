# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled kernels of CGLS: products over CSR row blocks on OpenMP threads, and vector updates.

Used through :mod:`skssl.svm._kernels`; the decisions and measurements are
in :mod:`skssl.svm._rowblocks` and :mod:`skssl.svm._mfn`.

One CGLS iteration needs ``q = X p`` and then ``X^T (C q)``; on 20
Newsgroups these products are four fifths of a fit. scipy computes them as
two mat-vecs, each reading all of ``X``'s values and indices. Row ``i``'s
contribution to ``X^T (C q)`` is ``c_i q_i x_i``, and ``q_i`` is known as soon
as the row is read, so one pass over the rows can do both products while the
row is still in cache: X is read once per iteration, which is what limits
the products once X outgrows the caches, and what limits two threads sharing
the memory bus. scipy has no such fused product, hence this kernel.
"""

from cython.parallel cimport prange


ctypedef fused index_t:
    int
    long long


cdef void _gram_rows(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t start,
    Py_ssize_t stop,
    const double[::1] p,
    double pb,
    double p_norm,
    const double[::1] cost,
    double[::1] q,
    double[::1] out,
    double* sums,
) noexcept nogil:
    cdef Py_ssize_t i, k, lo, hi
    cdef double s, cq, cq_sum = 0.0, qcq = 0.0
    out[:] = 0.0
    for i in range(start, stop):
        lo = indptr[i]
        hi = indptr[i + 1]
        s = 0.0
        for k in range(lo, hi):
            s = s + data[k] * p[indices[k]]
        s = (s + pb) / p_norm
        q[i] = s
        cq = cost[i] * s
        cq_sum += cq
        qcq += cq * s
        if cq != 0.0:
            for k in range(lo, hi):
                out[indices[k]] += cq * data[k]
    sums[0] = cq_sum
    sums[1] = qcq


def csr_gram_rows(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    const Py_ssize_t[::1] bounds,
    const double[::1] p,
    double pb,
    double p_norm,
    const double[::1] cost,
    double[::1] q,
    double[:, ::1] outs,
    double[:, ::1] sums,
    int n_threads,
):
    """One CGLS product over row blocks, one pass over each row, blocks in parallel (OpenMP).

    Block ``k`` holds rows ``bounds[k]:bounds[k + 1]``. For each row ``i``:
    ``q_i = (x_i . p + pb) / p_norm`` (summed in the order scipy's CSR
    mat-vec sums, so ``q`` is bitwise ``(X @ p + pb) / p_norm``), and block
    ``k`` writes ``outs[k] = sum_i cost_i q_i x_i`` over its rows (rows of
    zero cost are skipped) and ``sums[k] = (sum_i cost_i q_i, sum_i cost_i
    q_i^2)``. The blocks run on ``n_threads`` OpenMP threads without the GIL;
    one thread (or a build without OpenMP) runs them in order.
    """
    cdef Py_ssize_t blk, n_blocks = bounds.shape[0] - 1
    with nogil:
        for blk in prange(n_blocks, num_threads=n_threads, schedule="static", chunksize=1):
            _gram_rows(data, indices, indptr, bounds[blk], bounds[blk + 1], p, pb, p_norm, cost, q,
                       outs[blk], &sums[blk, 0])


cdef void _matvec_rows(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t start,
    Py_ssize_t stop,
    const double[::1] v,
    double[::1] out,
) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef double s
    for i in range(start, stop):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s = s + data[k] * v[indices[k]]
        out[i] = s


cdef void _rmatvec_rows(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t start,
    Py_ssize_t stop,
    const double[::1] z,
    double[::1] out,
) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef double zi
    out[:] = 0.0
    for i in range(start, stop):
        zi = z[i]
        if zi != 0.0:
            for k in range(indptr[i], indptr[i + 1]):
                out[indices[k]] += zi * data[k]


def csr_matvec_blocks(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    const Py_ssize_t[::1] bounds,
    const double[::1] v,
    double[::1] out,
    int n_threads,
):
    """``out = X @ v`` over row blocks in parallel (each row summed as scipy sums it)."""
    cdef Py_ssize_t blk, n_blocks = bounds.shape[0] - 1
    with nogil:
        for blk in prange(n_blocks, num_threads=n_threads, schedule="static", chunksize=1):
            _matvec_rows(data, indices, indptr, bounds[blk], bounds[blk + 1], v, out)


def csr_rmatvec_blocks(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    const Py_ssize_t[::1] bounds,
    const double[::1] z,
    double[:, ::1] outs,
    int n_threads,
):
    """``outs[k] = X_k^T z_k`` for every row block ``k``, in parallel."""
    cdef Py_ssize_t blk, n_blocks = bounds.shape[0] - 1
    with nogil:
        for blk in prange(n_blocks, num_threads=n_threads, schedule="static", chunksize=1):
            _rmatvec_rows(data, indices, indptr, bounds[blk], bounds[blk + 1], z, outs[blk])


def csr_matvec_subset(
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    const Py_ssize_t[::1] rows,
    const double[::1] v,
    double b,
    double[::1] out,
    int n_threads,
):
    """``out[r] = x_r . v + b`` for the rows ``r`` listed, on ``n_threads`` OpenMP threads.

    The rows are read where they are (no slice of X); each sum is summed as
    scipy's CSR mat-vec sums it.
    """
    cdef Py_ssize_t i, k, r
    cdef double s
    with nogil:
        for i in prange(rows.shape[0], num_threads=n_threads, schedule="static"):
            r = rows[i]
            s = 0.0
            for k in range(indptr[r], indptr[r + 1]):
                s = s + data[k] * v[indices[k]]
            out[r] = s + b


def cgls_step_features(double[::1] w, double[::1] xtz, const double[::1] p, const double[::1] u,
                       double step_w, double t, double alpha):
    """``w += step_w p``, ``xtz -= t u``, and ``|xtz - alpha w|^2``, in one pass."""
    cdef Py_ssize_t j, n = w.shape[0]
    cdef double r, rr = 0.0
    with nogil:
        for j in range(n):
            w[j] += step_w * p[j]
            xtz[j] -= t * u[j]
            r = xtz[j] - alpha * w[j]
            rr += r * r
    return rr


def cgls_step_direction(double[::1] p, const double[::1] xtz, const double[::1] w, double scale, double alpha):
    """``p = scale p + (xtz - alpha w)`` and ``|p|^2``, in one pass."""
    cdef Py_ssize_t j, n = p.shape[0]
    cdef double v, pp = 0.0
    with nogil:
        for j in range(n):
            v = scale * p[j] + (xtz[j] - alpha * w[j])
            p[j] = v
            pp += v * v
    return pp


def cgls_step_rows(double[::1] outputs, double[::1] z, const double[::1] q, const double[::1] cost, double t):
    """``outputs += t q``, ``z -= t cost q``, and ``(sum z, |z|^2)``, in one pass."""
    cdef Py_ssize_t i, n = z.shape[0]
    cdef double v, zs = 0.0, zz = 0.0
    with nogil:
        for i in range(n):
            outputs[i] += t * q[i]
            v = z[i] - t * (cost[i] * q[i])
            z[i] = v
            zs += v
            zz += v * v
    return zs, zz
