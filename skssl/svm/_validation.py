"""Validation of the design matrix ``X`` before the linear solvers see it.

The estimators pass ``X`` through :func:`as_float64_design` (float64 CSR, or a
C-contiguous float64 ndarray that the compiled dense kernels read in place)
and :func:`check_design_scale` (no value above :data:`MAX_ABS_VALUE`); the
solvers (:mod:`skssl.svm._mfn` and the loops built on it) assume both.

Decisions
---------
* **Duplicate entries are summed first.** scipy lets a CSR matrix store
  the same (row, column) more than once, its value being the sum of the
  entries (``toarray`` and products read it so). Parts of a fit that read
  the stored entries one by one, the content order of the rows
  (:mod:`skssl.svm._row_order`) and the scale check, would see the parts
  instead of the value: such a matrix gave another ``alpha_`` and another
  model than the same values in canonical form or dense. So an
  estimator's ``fit`` replaces a matrix that holds a duplicate entry by its
  canonical copy (duplicates summed, indices sorted:
  :func:`without_duplicate_entries`), once, where it validates ``X`` (and
  in every Dask block); the caller's matrix is never modified. The solvers
  themselves read duplicates right (their products sum them), so
  :func:`as_float64_design`, which every solve calls, does not look for
  them: in a first version it did, and the check took 29% of the CPU of a
  ``TransductiveSVC()`` fit on TF-IDF rows (174 calls). The fits an
  estimator runs inside its own (the safeguard's candidates and folds,
  the annealing start's checks) get its checked matrix and do not look
  again (:func:`fit_scope`). Measured on 20 Newsgroups' ibm.pc against
  mac hardware (1,175 documents, 131,266 unsorted TF-IDF entries, 50
  labels): the checks of every such fit took 1.9% of the CPU of
  ``TransductiveSVC()`` (20 calls); those of the user's matrix once and
  of the row subsets the supervised fits of the checks take, 0.6% (16
  calls; ``DeterministicAnnealingSVC()``: 0.1%).
* **Unsorted indices alone are kept.** ``TfidfVectorizer.fit_transform``
  returns rows whose column indices are not sorted (it renumbers the
  vocabulary alphabetically), so most text a user fits comes so; the
  kernels read such rows as they are, and a canonical copy would add the
  size of ``X`` to a fit's memory. Whether an unsorted matrix holds a
  duplicate is found on a sorted copy of a slice of rows at a time
  (:data:`DUPLICATE_CHECK_ENTRIES` entries): memory bounded, time
  ``O(nnz log)``; a canonical matrix (scipy's cached flag, else one pass
  over the indices) is not looked at further.
* **Scale.** Values above :data:`MAX_ABS_VALUE` (1e15) are rejected with a
  ``ValueError`` asking to scale ``X`` (:func:`check_design_scale`, called by
  the estimators): their squares overflow (from ~1e154) or the
  regularization is lost to rounding. So is an ``X`` whose largest absolute
  value is not 0 but below :data:`MIN_ABS_VALUE` (~1.5e-154): every square
  underflows, the rows' squared norms are 0, and ``alpha="auto"`` took them
  for all-zero rows and returned a model of zero weights that predicts one
  class (found in review, 2026-11-29: ``X * 1e-200``; from ``X * 1e-100`` on,
  ``alpha="auto"`` already refused the penalty as too small). A Dask fit
  applies the test to each block's largest value, so it also refuses a
  block of such values beside blocks of ordinary ones, which the fit of the
  rows in memory accepts (they are then practically zero rows). A
  non-finite Newton point still raises ``FloatingPointError`` rather than
  returning NaN weights.
* **The solvers see only the columns that hold an entry.** A feature column
  of a CSR ``X`` without a stored entry has weight 0 at the optimum of the
  l2-penalized objectives, and every iterate from ``w = 0`` keeps it 0. The
  estimators hand their solvers ``X`` restricted to its used columns
  (:func:`on_used_columns`, renumbered in order, so products sum in the same
  order) and put the weights back into a ``coef_`` of zeros at the end:
  with 20 entries per row in 400,000 columns, the solvers' work arrays of
  the length of ``w`` had made a fit's memory 10 to 12 times ``coef_``.
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
    "without_duplicate_entries",
]

#: Entries per slice of rows in which :func:`has_duplicate_entries` sorts a copy of an unsorted matrix's indices.
DUPLICATE_CHECK_ENTRIES = 1 << 20

#: Largest absolute value of X the solvers accept. Beyond it float64 cannot
#: represent the problem: the regularization ``alpha |w|^2`` vanishes next to
#: the loss (the Newton system ``alpha I + X' C X`` is singular to working
#: precision) and, from ~1e154 on, ``|x|^2`` overflows. Measured on 60 x 4
#: Gaussian data with alpha = 1e-3: at 1e10 and 1e20 the fits are finite and
#: correct, at 1e30 l2-SVM-MFN returns w = 0 as "converged", at 1e154 NaN.
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
    """Whether some (row, column) of the CSR matrix ``X`` is stored more than once.

    Parameters
    ----------
    X : csr sparse matrix or array
        The rows; never modified.

    Returns
    -------
    found : bool

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from skssl.svm._validation import has_duplicate_entries
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
    """``X`` itself when no entry is stored twice, else its canonical copy (:func:`canonical_csr`).

    Within a :func:`fit_scope`, a matrix that an enclosing fit has checked (the same object) is not looked at
    again.

    Parameters
    ----------
    X : {csr sparse matrix or array, ndarray}
        The rows; never modified. Dense rows are returned as they are.

    Returns
    -------
    X : {csr sparse matrix or array, ndarray}
        The same values, each (row, column) stored at most once.
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
    """``X`` itself when it is canonical, else a copy with its duplicate entries summed and its indices sorted.

    Parameters
    ----------
    X : csr sparse matrix or array
        The rows; never modified.

    Returns
    -------
    X : csr sparse matrix or array
        The same values, each stored at most once per row and column, in increasing column order (stored zeros
        are kept).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from skssl.svm._validation import canonical_csr
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
    """Raise a ValueError when ``X`` holds values too large for the float64 solvers.

    Values above ~1e154 pass scikit-learn's finiteness check but their squares
    overflow; well before that, above :data:`MAX_ABS_VALUE`, the
    regularization is lost to rounding. Both would give NaN or meaningless
    weights, so the user is asked to scale ``X``; and so is an ``X`` whose
    values are not all 0 but all below :data:`MIN_ABS_VALUE`, whose squares
    underflow.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray}
        Float64 data.
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
