# cython: language_level=3
"""One pass over a compressed sparse structure that proves it safe to index.

Used through :func:`skssl.utils.validation.check_sparse_structure`, which
says what is checked and why.
"""

ctypedef fused pointer_t:
    int
    long long

ctypedef fused index_t:
    int
    long long


def first_structure_error(
    const pointer_t[::1] indptr,
    const index_t[::1] indices,
    Py_ssize_t n_minor,
):
    """Locate the first fault of a CSR/CSC ``(indptr, indices)`` pair, in one GIL-free pass.

    ``indptr`` has one entry more than the matrix has major lines (rows for
    CSR); its length, its first entry and the stored length have been checked
    by the caller, so every ``indptr[i]`` read here is in bounds.

    Parameters
    ----------
    indptr : ndarray of int32 or int64
        The index pointer, ``indptr[0] == 0``.
    indices : ndarray of int32 or int64
        The minor indices (columns for CSR); at least ``indptr[-1]`` long.
    n_minor : int
        The number of minor lines (columns for CSR).

    Returns
    -------
    kind : int
        0 when the structure is sound; 1 when ``indptr`` decreases at
        ``where`` (``indptr[where] > indptr[where + 1]``); 2 when
        ``indptr[where + 1]`` exceeds the stored length; 3 when
        ``indices[where]`` is negative or not below ``n_minor``.
    where : int
        The position of the first fault, or -1.
    """
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t n_stored = indices.shape[0]
    cdef Py_ssize_t i, k, lo, hi, where = -1
    cdef long long value
    cdef int kind = 0
    if n_major < 0:  # an empty indptr has no last entry to read; the caller's length check reports it
        return 2, -1
    with nogil:
        # The pointers first: a bad pointer must not steer the index scan.
        for i in range(n_major):
            lo = indptr[i]
            hi = indptr[i + 1]
            if hi < lo:
                kind, where = 1, i
                break
            if hi > n_stored:
                kind, where = 2, i
                break
        if kind == 0:
            for k in range(<Py_ssize_t>indptr[n_major]):
                value = indices[k]
                if value < 0 or value >= n_minor:
                    kind, where = 3, k
                    break
    return kind, where
