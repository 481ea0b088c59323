"""Validation of the design matrix ``X`` before the linear solvers see it.

The estimators pass ``X`` through :func:`as_float64_design` (float64 CSR, or a
C-contiguous float64 ndarray that the compiled dense kernels read in place)
and :func:`check_design_scale` (largest absolute value between
:data:`MIN_ABS_VALUE` and :data:`MAX_ABS_VALUE`, or zero); the solvers
(:mod:`skssl.svm.solvers._mfn` and the loops built on it) assume both. ``fit``
replaces a CSR matrix that stores a duplicate entry by its canonical copy
(:func:`without_duplicate_entries`, once per fit, never modifying the
caller's matrix); unsorted indices alone are kept. The fits an estimator
runs inside its own reuse its checked matrix (:func:`fit_scope`).

Design decisions: user guide, Implementation decisions: linear S3VMs, "Validation of X".
"""

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DUPLICATE_CHECK_ENTRIES",
    "MAX_ABS_VALUE",
    "MIN_ABS_VALUE",
    "as_float64_design",
    "canonical_csr",
    "check_design_scale",
    "fit_scope",
    "has_duplicate_entries",
    "on_used_columns",
    "rows_of_positive_weight",
    "without_duplicate_entries",
]

#: Entries per slice of rows in which :func:`has_duplicate_entries` sorts a copy of an unsorted matrix's indices.
DUPLICATE_CHECK_ENTRIES = 1 << 20

#: Largest absolute value of X the solvers accept. Beyond it float64 cannot
#: represent the problem: the regularization ``alpha |w|^2`` vanishes next to
#: the loss (the Newton system ``alpha I + X' C X`` is singular to working
#: precision) and, from ~1e154 on, ``|x|^2`` overflows.
MAX_ABS_VALUE = 1e15
#: Smallest largest-absolute-value of a non-zero X the solvers accept: below it every square underflows float64's
#: normal range (``sqrt`` of its smallest normal number), and the rows' squared norms are 0 or subnormal.
MIN_ABS_VALUE = float(np.sqrt(np.finfo(np.float64).tiny))


def as_float64_design(X):
    """Return ``X`` as float64 CSR (sparse) or a C-contiguous float64 ndarray, copying only when needed.

    Dense ``X`` is made C-contiguous (a copy of a Fortran-ordered array, once per fit) because the compiled
    dense kernels read it row by row in place. The estimators also replace a sparse ``X`` with an entry stored
    twice by its canonical copy (:func:`without_duplicate_entries`), once per fit.
    """
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


def on_used_columns(X):
    """``(X_used, columns)``: a CSR ``X`` restricted to the columns that hold a stored entry, and those columns.

    ``columns`` (increasing) is None, and ``X_used`` is ``X``, where nothing is left out: dense ``X``, every
    column used, or no entry at all. Otherwise ``X_used`` shares ``X``'s values and row pointers; its column
    indices are renumbered 0 .. ``columns.size - 1`` in the same order, so that a weight vector ``w`` of
    ``X_used`` gives ``X_used @ w == X @ expand(w)`` with the same sums. Memory: one byte per column of ``X``
    while it runs, then the new indices and ``columns``.
    """
    if not sp.issparse(X) or X.nnz == 0:
        return X, None
    used = np.zeros(X.shape[1], dtype=bool)
    used[X.indices] = True
    columns = np.flatnonzero(used)
    del used
    if columns.size == X.shape[1]:
        return X, None
    indices = np.searchsorted(columns, X.indices).astype(X.indices.dtype, copy=False)
    X_used = sp.csr_matrix((X.data, indices, X.indptr), shape=(X.shape[0], columns.size), copy=False)
    X_used.has_sorted_indices = X.has_sorted_indices
    return X_used, columns


def has_duplicate_entries(X):
    """Whether some (row, column) of the CSR matrix ``X`` (never modified) is stored more than once.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from skssl.svm.kernels._validation import has_duplicate_entries
    >>> unsorted = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
    >>> has_duplicate_entries(unsorted)
    False
    >>> has_duplicate_entries(sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, 2)))
    True
    """
    if X.has_canonical_format:
        return False
    indptr = np.asarray(X.indptr)
    row = 0
    while row < X.shape[0]:
        # the rows from `row` on whose entries fit in one slice (at least one row)
        end = max(int(np.searchsorted(indptr, indptr[row] + DUPLICATE_CHECK_ENTRIES, side="right")) - 1, row + 1)
        start, stop = indptr[row], indptr[end]
        part = sp.csr_matrix(
            (np.ones(stop - start), np.array(X.indices[start:stop]), indptr[row : end + 1] - start),
            shape=(end - row, X.shape[1]),
        )
        part.sum_duplicates()
        if part.nnz < stop - start:
            return True
        row = end
    return False


#: The matrices the enclosing fits of this thread have checked (``None``: outside any fit).
_CHECKED_ROWS = ContextVar("skssl_rows_without_duplicates", default=None)


@contextmanager
def fit_scope():
    """The scope of one ``fit``: the fits it runs inside (candidates, folds) do not check its rows again.

    What a fit learns is forgotten when it returns (the variable is reset), so no reference to ``X``
    outlives the fit.
    """
    outer = _CHECKED_ROWS.get()
    token = _CHECKED_ROWS.set(() if outer is None else outer)
    try:
        yield
    finally:
        _CHECKED_ROWS.reset(token)


def without_duplicate_entries(X):
    """``X`` itself when no entry is stored twice (or ``X`` is dense), else its canonical copy (:func:`canonical_csr`).

    Within a :func:`fit_scope`, a matrix that an enclosing fit has checked (the
    same object) is not looked at again. ``X`` is never modified.
    """
    if not sp.issparse(X):
        return X
    checked = _CHECKED_ROWS.get()
    if checked is not None and any(X is seen for seen in checked):
        return X
    X = canonical_csr(X) if has_duplicate_entries(X) else X
    if checked is not None:
        _CHECKED_ROWS.set(checked + (X,))
    return X


def canonical_csr(X):
    """``X`` itself when canonical, else a copy with duplicate entries summed and indices sorted (zeros kept).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from skssl.svm.kernels._validation import canonical_csr
    >>> X = sp.csr_matrix((np.array([1.0, 2.0, 4.0]), np.array([1, 0, 1]), np.array([0, 3])), shape=(1, 2))
    >>> X.nnz, canonical_csr(X).nnz
    (3, 2)
    >>> canonical_csr(X).toarray().tolist() == X.toarray().tolist() == [[2.0, 5.0]]
    True
    """
    if X.has_canonical_format:
        return X
    X = X.copy()
    X.sum_duplicates()  # sorts the indices too
    return X


def check_design_scale(X):
    """Raise a ValueError asking to scale ``X`` (float64) when its values are too large or too small for the solvers.

    Above :data:`MAX_ABS_VALUE` the regularization is lost to rounding (and
    from ~1e154 the squares overflow); a non-zero ``X`` below
    :data:`MIN_ABS_VALUE` has squares that underflow.
    """
    values = X.data if sp.issparse(X) else X
    # max and -min instead of abs(values).max(): no copy of the data (a
    # temporary of 2/3 of the CSR size of X, the peak of a DA fit).
    top = float(np.maximum(values.max(), -values.min())) if values.size else 0.0
    if not top <= MAX_ABS_VALUE:
        raise ValueError(
            f"X has values up to {top:.3g} in absolute value; above {MAX_ABS_VALUE:.0e} the l2-SVM problem cannot "
            "be solved in float64 (squares overflow or the regularization is lost to rounding). Please scale X "
            "first, e.g. with sklearn.preprocessing.MaxAbsScaler or StandardScaler."
        )
    if 0.0 < top < MIN_ABS_VALUE:
        raise ValueError(
            f"X's largest absolute value is {top:.3g}; below {MIN_ABS_VALUE:.2g} the squares of its values underflow "
            "in float64, and the rows' norms read as 0. Please scale X first, e.g. with "
            "sklearn.preprocessing.MaxAbsScaler or StandardScaler."
        )


def rows_of_positive_weight(X, mask, sample_weight):
    """``(weights, labeled, unlabeled)``: the row weights (ones for ``None``) and the labeled and unlabeled rows of
    positive weight, the rows that take part in a fit. ``sample_weight``: a fit's checked float64 weights."""
    weights = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    positive = weights > 0
    return weights, np.flatnonzero(mask & positive), np.flatnonzero(~mask & positive)
