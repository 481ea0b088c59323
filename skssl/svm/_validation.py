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
  model than the same values in canonical form or dense. So
  :func:`as_float64_design` returns a canonical copy (duplicates summed,
  indices sorted) of a matrix that is not canonical; the caller's matrix
  is never modified, and a canonical one is used as it is (the check is
  one pass over the indices, which scipy caches).
* **Scale.** Values above :data:`MAX_ABS_VALUE` (1e15) are rejected with a
  ``ValueError`` asking to scale ``X`` (:func:`check_design_scale`, called by
  the estimators): their squares overflow (from ~1e154) or the
  regularization is lost to rounding. A non-finite Newton point still
  raises ``FloatingPointError`` rather than returning NaN weights.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_ABS_VALUE", "as_float64_design", "canonical_csr", "check_design_scale"]

#: Largest absolute value of X the solvers accept. Beyond it float64 cannot
#: represent the problem: the regularization ``alpha |w|^2`` vanishes next to
#: the loss (the Newton system ``alpha I + X' C X`` is singular to working
#: precision) and, from ~1e154 on, ``|x|^2`` overflows. Measured on 60 x 4
#: Gaussian data with alpha = 1e-3: at 1e10 and 1e20 the fits are finite and
#: correct, at 1e30 l2-SVM-MFN returns w = 0 as "converged", at 1e154 NaN.
MAX_ABS_VALUE = 1e15


def as_float64_design(X):
    """Return ``X`` as canonical float64 CSR (sparse) or a C-contiguous float64 ndarray, copying only when needed.

    Dense ``X`` is made C-contiguous (a copy of a Fortran-ordered array, once per fit) because the compiled
    dense kernels read it row by row in place. Sparse ``X`` is made canonical by :func:`canonical_csr`.
    """
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        return canonical_csr(X)
    return np.ascontiguousarray(X, dtype=np.float64)


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
    weights, so the user is asked to scale ``X``.

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
