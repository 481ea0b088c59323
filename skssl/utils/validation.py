"""Checks of sparse input that scikit-learn and scipy leave to the caller.

scipy checks a sparse matrix's structure only on request, and skssl's
compiled kernels and scipy's C++ routines trust it: a column index equal to
``n_features`` or a decreasing ``indptr`` crashes the process or corrupts its
memory. Every entry point of skssl that takes ``X`` therefore passes sparse
input through :func:`check_sparse_structure` first: one compiled pass over
``indptr`` and one over the indices, no copy of a sound matrix. Index arrays
of other integer types (or of two types) become ``int64``, non-contiguous
arrays are copied, entries beyond ``indptr[-1]`` are an error, and the
caller's matrix is never modified. LIL, DOK and DIA are converted first.

Design decisions: user guide, Implementation decisions (shared contract), "Sparse structure and Dask prediction".
"""

import numpy as np
import scipy.sparse as sp

try:
    from ._sparse_structure import first_structure_error as _compiled_first_error
except ImportError:  # a source checkout that was never built
    _compiled_first_error = None

__all__ = ["check_sparse_structure"]

_KERNEL_INDEX_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


def check_sparse_structure(X, *, input_name="X"):
    """Check that a sparse matrix's stored structure is sound, before any compiled code reads it.

    Dense input is returned unchanged. A sparse matrix is checked in one
    pass: index arrays of integer type and one-dimensional, ``indptr`` of the
    right length, starting at 0, non-decreasing and ending at the number of
    stored entries, every stored index within the matrix's shape.

    Parameters
    ----------
    X : {array-like, sparse matrix}
        The input to check.
    input_name : str, default="X"
        The name used in error messages.

    Returns
    -------
    X : {array-like, sparse matrix}
        ``X`` itself when nothing needed converting; otherwise a new sparse
        matrix of the same format (or CSR/COO for LIL, DOK and DIA input)
        whose index arrays are ``int32``/``int64`` and whose arrays are
        contiguous. The caller's matrix is never modified.

    Raises
    ------
    ValueError
        If the structure is malformed; the message names the fault and where.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from skssl.utils.validation import check_sparse_structure
    >>> X = sp.random(4, 3, density=0.5, format="csr", random_state=0)
    >>> check_sparse_structure(X) is X
    True
    >>> X.indices[0] = 3
    >>> check_sparse_structure(X)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: X (a 4x3 CSR matrix) has a malformed structure: stored column index 3 ... out of range [0, 3).
    """
    if not sp.issparse(X):
        return X
    fmt = X.format
    if fmt == "lil":
        X = X.tocsr()  # scipy flattens the row lists in Python-level code
        fmt = "csr"
    elif fmt in ("dok", "dia"):
        X = X.tocoo()  # numpy code; the coordinates are checked below
        fmt = "coo"
    where = f"{input_name} (a {X.shape[0]}x{X.shape[1]} {fmt.upper()} matrix) has a malformed structure"
    if fmt in ("csr", "csc"):
        return _check_compressed(X, fmt, where)
    if fmt == "bsr":
        return _check_block(X, where)
    if fmt == "coo":
        return _check_coordinates(X, where)
    raise ValueError(f"{input_name} is a sparse matrix of unsupported format {fmt!r}; convert it to CSR first.")


def _as_array(X, attribute, where):
    value = getattr(X, attribute, None)
    if not isinstance(value, np.ndarray) or value.ndim != 1:
        shape = getattr(value, "shape", None)
        raise ValueError(
            f"{where}: {attribute} must be a one-dimensional numpy array, got {type(value).__name__}"
            f"{'' if shape is None else f' of shape {shape}'}."
        )
    return value


def _as_index_array(X, attribute, where):
    """The index array as a contiguous int32/int64 array (a copy only when needed)."""
    value = _as_array(X, attribute, where)
    if value.dtype.kind not in "iu":
        raise ValueError(f"{where}: {attribute} must hold integers, got dtype {value.dtype}.")
    if value.dtype not in _KERNEL_INDEX_TYPES:
        if value.dtype.kind == "u" and value.size and int(value.max()) > np.iinfo(np.int64).max:
            raise ValueError(f"{where}: {attribute} holds {int(value.max())}, beyond any valid index.")
        return np.ascontiguousarray(value, dtype=np.int64)
    return np.ascontiguousarray(value)


def _first_error(indptr, indices, n_minor):
    if _compiled_first_error is not None:
        return _compiled_first_error(indptr, indices, n_minor)
    steps = np.diff(indptr)
    if np.any(steps < 0):
        return 1, int(np.flatnonzero(steps < 0)[0])
    if indptr.size > 1 and indptr[-1] > indices.shape[0]:
        return 2, int(np.flatnonzero(indptr[1:] > indices.shape[0])[0])
    stored = indices[: indptr[-1]]
    bad = (stored < 0) | (stored >= n_minor)
    if np.any(bad):
        return 3, int(np.flatnonzero(bad)[0])
    return 0, -1


def _check_compressed(X, fmt, where, n_major=None, n_minor=None, minor_name=None):
    """Check a CSR/CSC (or, with the block counts, BSR) matrix; return it or its converted copy."""
    if n_major is None:
        n_major, n_minor = X.shape if fmt == "csr" else X.shape[::-1]
        minor_name = "column" if fmt == "csr" else "row"
    indptr = _as_index_array(X, "indptr", where)
    indices = _as_index_array(X, "indices", where)
    if indptr.dtype != indices.dtype:  # one index type for both: scipy's compiled routines may require it
        indptr, indices = indptr.astype(np.int64, copy=False), indices.astype(np.int64, copy=False)
    data = _as_array(X, "data", where) if fmt != "bsr" else X.data
    if indptr.shape[0] != n_major + 1:
        raise ValueError(f"{where}: indptr has {indptr.shape[0]} entries, expected {n_major + 1}.")
    if indices.shape[0] != data.shape[0]:
        raise ValueError(
            f"{where}: indices has {indices.shape[0]} entries but data has {data.shape[0]}; they must match."
        )
    if indptr[0] != 0:
        raise ValueError(f"{where}: indptr must start at 0, got {int(indptr[0])}.")
    kind, at = _first_error(indptr, indices, n_minor)
    if kind == 1:
        raise ValueError(
            f"{where}: indptr decreases at position {at} ({int(indptr[at])} then {int(indptr[at + 1])}); "
            "it must be non-decreasing."
        )
    if kind == 2:
        raise ValueError(
            f"{where}: indptr[{at + 1}] = {int(indptr[at + 1])} exceeds the {indices.shape[0]} stored entries."
        )
    if kind == 3:
        raise ValueError(
            f"{where}: stored {minor_name} index {int(indices[at])} at position {at} is out of range [0, {n_minor})."
        )
    if indptr[-1] != indices.shape[0]:
        raise ValueError(
            f"{where}: indptr ends at {int(indptr[-1])} but {indices.shape[0]} entries are stored; entries past "
            "indptr[-1] belong to no row. Call X.prune() first if they are meant to be dropped."
        )
    data_c = data if fmt == "bsr" else np.ascontiguousarray(data)
    if indptr is X.indptr and indices is X.indices and data_c is X.data:
        return X
    # A new matrix object sharing the arrays that needed no conversion. Assigning the attributes directly
    # (as scipy's own slicing code does) skips the constructor's checks and index-type changes.
    converted = X.copy() if fmt == "bsr" else type(X)(X.shape, dtype=X.dtype)
    converted.data, converted.indices, converted.indptr = data_c, indices, indptr
    return converted


def _check_block(X, where):
    data = X.data
    if not isinstance(data, np.ndarray) or data.ndim != 3:
        raise ValueError(f"{where}: data must be a 3-D array of blocks.")
    r, c = data.shape[1:]
    if r < 1 or c < 1 or X.shape[0] % r or X.shape[1] % c:
        raise ValueError(f"{where}: the block size {(r, c)} does not divide the shape {X.shape}.")
    return _check_compressed(X, "bsr", where, X.shape[0] // r, X.shape[1] // c, "block column")


def _check_coordinates(X, where):
    arrays = {}
    for name in ("row", "col"):
        arrays[name] = _as_index_array(X, name, where)
    data = _as_array(X, "data", where)
    for name, bound in (("row", X.shape[0]), ("col", X.shape[1])):
        a = arrays[name]
        if a.shape[0] != data.shape[0]:
            raise ValueError(f"{where}: {name} has {a.shape[0]} entries but data has {data.shape[0]}; they must match.")
        if a.size:
            low, high = int(a.min()), int(a.max())
            if low < 0 or high >= bound:
                bad = low if low < 0 else high
                raise ValueError(f"{where}: stored {name} index {bad} is out of range [0, {bound}).")
    if arrays["row"] is X.row and arrays["col"] is X.col:
        return X
    return type(X)((data, (arrays["row"], arrays["col"])), shape=X.shape)
