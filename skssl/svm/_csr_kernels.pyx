# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled kernel of CGLS's products on CSR rows (see :mod:`skssl.svm._rowblocks`).

One CGLS iteration needs ``q = X p`` and then ``X^T (C q)``; on 20
Newsgroups these products are four fifths of a fit. scipy computes them as
two mat-vecs, each reading all of ``X``'s values and indices. Row ``i``'s
contribution to ``X^T (C q)`` is ``c_i q_i x_i``, and ``q_i`` is known as soon
as the row is read, so one pass over the rows can do both products while the
row is still in cache: X is read once per iteration, which is what limits
the products once X outgrows the caches, and what limits two threads sharing
the memory bus. scipy has no such fused product, hence this kernel.
"""

ctypedef fused index_t:
    int
    long long


def csr_gram_rows(
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
):
    """Rows ``start:stop`` of one CGLS product, in one pass, without the GIL.

    For each row ``i``: ``q_i = (x_i . p + pb) / p_norm`` (summed in the order
    scipy's CSR mat-vec sums, so ``q`` is bitwise ``(X @ p + pb) / p_norm``)
    and ``out += cost_i q_i x_i`` (rows of zero cost are skipped).

    Returns
    -------
    cq_sum : float
        ``sum_i cost_i q_i`` over the rows (the bias part of ``X^T C q``).
    qcq : float
        ``sum_i cost_i q_i^2`` over the rows.
    """
    cdef Py_ssize_t i, k, lo, hi
    cdef double s, cq, cq_sum = 0.0, qcq = 0.0
    with nogil:
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
    return cq_sum, qcq
