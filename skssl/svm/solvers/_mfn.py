"""The modified finite Newton solver for the linear l2-SVM (l2-SVM-MFN).

Minimizes ``F(w, b) = 1/2 (alpha |w|^2 + alpha_b b^2 + sum_t c_t max(0, 1 - y_t o_t)^2)``
over loss terms ``t`` that may share a row of ``X`` (SVMlin's ``L2_SVM_MFN``;
Keerthi & DeCoste 2005): Newton steps on the active terms solved by CGLS, then an
exact line search. :func:`newton_solve` is the loop over the row backend of
:mod:`skssl.svm.solvers._rows`; :class:`MemoryRows` is the in-memory backend and
:func:`l2_svm_mfn` the loop on it. Decisions: user guide, "Mathematical
formulation of the linear S3VMs", "l2-SVM-MFN" and "Implementation decisions".
"""

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._callback import current_callback, notify
from ..kernels._kernels import (
    csr_cgls,
    csr_matvec_subset,
    dense_cgls,
    dense_matvec_subset,
    dot,
    line_search_terms,
    squared_norm,
)
from ..kernels._rowblocks import DenseRows, RowSlicer, indptr_like_indices, kernel_rows, row_blocks
from ..kernels._validation import as_float64_design
from ._rows import NewtonRows

__all__ = [
    "BIG_EPSILON",
    "CGITERMAX",
    "EPSILON",
    "MFNITERMAX",
    "RELATIVE_STOP_EPS",
    "SLICE_FRACTION",
    "SMALL_CGITERMAX",
    "CGTolerance",
    "MFNResult",
    "MemoryRows",
    "cgls",
    "l2_svm_mfn",
    "line_search",
    "mfn_objective",
    "newton_solve",
    "penalty",
]

# SVMlin's constants (ssl.h).
CGITERMAX = 10000
SMALL_CGITERMAX = 10
EPSILON = 1e-6
BIG_EPSILON = 0.01
RELATIVE_STOP_EPS = 1e-9
MFNITERMAX = 50

#: CGLS's residual ``X^T z - D w`` is a difference of terms of size about ``|X|_F |z|``, so rounding leaves it
#: at about the machine epsilon times that. SVMlin's rule (``|r| < eps |z|``) asks for less than this floor on
#: data of a very large scale (``|X|_F`` above about 1e7: values of 1e10 in a few rows), where CGLS would run
#: to its cap and break down in NaN; there its tolerance is 16 machine epsilons times ``|X|_F``.
#: On data of ordinary scale the floor is far below ``EPSILON`` and nothing changes.
CG_ROUNDING_FLOOR = 16 * float(np.finfo(np.float64).eps)

#: A Newton step slices the active rows out of X only when they hold at most
#: this fraction of its non-zeros; above it CGLS runs on all of X with zero
#: costs on the inactive rows (at most 1/0.8 = 1.25 times the work of the
#: slice, and no copy). The slice, at most this fraction of X's data and
#: indices, is the largest memory a fit adds (see the memory decision of :mod:`skssl.svm.kernels._rowblocks`).
SLICE_FRACTION = 0.8


@dataclass
class CGTolerance:
    """The CGLS tolerance that successive seeded solves of one fit share.

    Parameters
    ----------
    eps : float, default=BIG_EPSILON
        Relative tolerance of the next seeded CGLS call.
    """

    eps: float = BIG_EPSILON


@dataclass
class MFNResult:
    """Solution of one l2-SVM-MFN call.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
        Weights.
    b : float
        Bias.
    outputs : ndarray of shape (n_rows,)
        ``X @ w + b``.
    objective : float
        ``F(w, b)`` at the solution.
    n_iter : int
        Newton steps taken (CGLS calls).
    n_cg_iter : int
        CGLS iterations over all Newton steps.
    n_empty_steps : int
        Newton steps taken from a point where no loss term was active (their
        Newton point is ``w = 0, b = 0``, see the user guide's implementation decisions).
    converged : bool
        Whether the optimality test at ``EPSILON`` or the stopping rule on
        ``F`` ended the loop (as opposed to ``max_iter``).
    """

    w: np.ndarray
    b: float
    outputs: np.ndarray
    objective: float
    n_iter: int
    n_cg_iter: int
    n_empty_steps: int
    converged: bool


def _outputs(X, rows, v, b, n_threads, out=None):
    """``out[rows] = X[rows] @ v + b`` by the compiled kernels, the rows read in place (``out`` new when None).

    Each row's sum is the kernels' row product: for CSR summed as scipy's mat-vec sums it, for dense rows
    BLAS's ``ddot``.
    """
    if out is None:
        out = np.empty(X.shape[0])
    if sp.issparse(X):
        csr_matvec_subset(X.data, X.indices, indptr_like_indices(X), rows, v, float(b), out, n_threads)
    else:
        dense_matvec_subset(X, rows, v, float(b), out, n_threads)
    return out


def _outputs_after_cgls(X, J, oJ, w_bar, b_bar, n_threads):
    """``X @ w_bar + b_bar`` when CGLS has kept the outputs ``oJ`` of the rows ``J`` up to date.

    As SVMlin's ``L2_SVM_MFN`` does, only the other rows are computed (read in
    place by the compiled kernels): none when CGLS ran on every row, which is
    DA's usual case.
    """
    n_rows = X.shape[0]
    if J.size == n_rows:
        return oJ
    o_bar = np.empty(n_rows)
    o_bar[J] = oJ
    others = np.ones(n_rows, dtype=bool)
    others[J] = False
    return _outputs(X, np.flatnonzero(others), w_bar, b_bar, n_threads, o_bar)


def penalty(w, b, alpha, alpha_b=None):
    """The regularization ``alpha |w|^2 + alpha_b b^2`` (``alpha_b = alpha`` when None, SVMlin's).

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float
    alpha : float
        Regularization of the weights.
    alpha_b : float, default=None
        Regularization of the bias; ``None`` takes ``alpha``.

    Returns
    -------
    value : float
    """
    return alpha * dot(w, w) + (alpha if alpha_b is None else alpha_b) * b * b


def mfn_objective(w, b, outputs, y, cost, alpha, rows=None, alpha_b=None):
    """l2-SVM-MFN objective ``F`` for row outputs ``outputs``.

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    b : float
    outputs : ndarray of shape (n_rows,)
        ``X @ w + b``.
    y, cost : ndarray of shape (n_terms,)
        Target (+1 / -1) and cost of each loss term.
    alpha : float
        Regularization of ``w``.
    rows : ndarray of int of shape (n_terms,), default=None
        Row of each term; ``None`` means term ``t`` is row ``t``.
    alpha_b : float, default=None
        Regularization of ``b``; ``None`` takes ``alpha``.

    Returns
    -------
    F : float
    """
    o = outputs if rows is None else outputs[rows]
    slack = np.maximum(0.0, 1.0 - y * o)
    return 0.5 * (penalty(w, b, alpha, alpha_b) + dot(cost, slack * slack))


def cgls(XJ, cost, target, outputs, w, b, alpha, eps, max_iter, alpha_b=None):
    """Solve ``(D + X^T C X) [w; b] = X^T C target`` by CGLS, seeded at ``(w, b)``.

    ``X`` is ``XJ`` (CSR, row blocks or dense rows) with an implicit column of
    ones, ``D = diag(alpha, ..., alpha, alpha_b)`` (``alpha_b=None``: ``alpha``).
    Stops when ``|r|^2 < eps^2 |z|^2``, ``z = C (target - o)``, ``r = X^T z - D [w; b]``
    (SVMlin's rule), or after ``max_iter``. ``w`` and ``outputs`` (``XJ @ w + b``)
    are updated in place; returns ``(b, converged, n_iter)``.
    """
    if XJ.shape[0] == 0:
        # No rows: the system is alpha [w; b] = 0 (see the user guide's implementation decisions).
        w[:] = 0.0
        return 0.0, True, 0
    args = (cost, target, outputs, w, b, alpha, alpha if alpha_b is None else alpha_b, eps, max_iter)
    if isinstance(XJ, np.ndarray):
        XJ = DenseRows(XJ, np.arange(XJ.shape[0], dtype=np.intp), 1)
    if isinstance(XJ, DenseRows):
        return dense_cgls(XJ.X, XJ.rows, XJ.bounds, *args, XJ.n_blocks)
    if (rows := kernel_rows(XJ)) is None:
        raise TypeError(f"cgls takes float64 CSR or dense rows (as_float64_design's), got {type(XJ).__name__}.")
    X, bounds = rows
    return csr_cgls(X.data, X.indices, indptr_like_indices(X), bounds, *args, len(bounds) - 1)


def line_search(w, w_bar, b, b_bar, alpha, o, o_bar, y, cost, alpha_b=None):
    """Exact minimizer over ``delta >= 0`` of ``F(w + delta (w_bar - w))``.

    ``phi'(delta)`` is continuous and piecewise linear: on each piece it is
    ``L + delta (R - L)``. The pieces change where a term enters or leaves the
    active set; those breakpoints are sorted and walked until the slope at a
    breakpoint turns non-negative, and the root ``-L / (R - L)`` of the current
    piece is returned. The compiled kernel ``line_search_terms`` finds that
    piece by selection instead of a sort (expected linear time).

    Parameters
    ----------
    w, w_bar : ndarray of shape (n_features,)
        Current point and the Newton point.
    b, b_bar : float
        Their biases.
    alpha : float
        Regularization of ``w``.
    o, o_bar : ndarray of shape (n_terms,)
        Outputs of every loss term at the two points.
    y, cost : ndarray of shape (n_terms,)
        Targets and costs of the terms.
    alpha_b : float, default=None
        Regularization of the bias; ``None`` takes ``alpha``.

    Returns
    -------
    delta : float
        The step.
    """
    alpha_b = alpha if alpha_b is None else alpha_b
    dw = w_bar - w
    db = b_bar - b
    L = alpha * dot(w, dw) + alpha_b * b * db
    R = alpha * dot(w_bar, dw) + alpha_b * b_bar * db
    c = np.ascontiguousarray
    return line_search_terms(c(o), c(o_bar), c(y, dtype=np.float64), c(cost, dtype=np.float64), L, R)


def _scatter(J, values, n_rows):
    full = np.zeros(n_rows)
    full[J] = values
    return full


def _active_system(outputs, y, cost, rows, n_rows):
    """Active terms and the merged least-squares rows (J, cost, target) they give."""
    o = outputs if rows is None else outputs[rows]
    active = y * o < 1.0
    if rows is None:
        J = np.flatnonzero(active)
        return active, J, cost[J], y[J]
    ra = rows[active]
    ca = cost[active]
    c_row = np.bincount(ra, weights=ca, minlength=n_rows)
    cy_row = np.bincount(ra, weights=ca * y[active], minlength=n_rows)
    J = np.flatnonzero(np.bincount(ra, minlength=n_rows))
    cJ = c_row[J]
    with np.errstate(invalid="ignore", divide="ignore"):
        tJ = np.where(cJ > 0, cy_row[J] / cJ, 0.0)
    return active, J, cJ, tJ


class MemoryRows(NewtonRows):
    """The in-memory backend of the Newton loop: ``X`` in this process, every pass one call of the compiled kernels.

    The Newton system is the active rows of ``X``: read in place when ``X`` is
    dense (:class:`~skssl.svm.kernels._rowblocks.DenseRows`), all of ``X`` with
    zero costs on the inactive rows when they hold more than
    :data:`SLICE_FRACTION` of its non-zeros, else a slice of them cut into
    ``slicer``'s buffers; CGLS is one compiled call on it (:func:`cgls`).

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data (see :func:`~skssl.svm.kernels._validation.as_float64_design`); never modified.
    y, cost : ndarray of shape (n_terms,)
        Target (+1 / -1) and non-negative cost of each loss term.
    w : ndarray of shape (n_features,)
        The starting point, for its outputs when ``outputs`` is None.
    b : float
        Its bias.
    rows, outputs, schedule, n_threads, slicer
        As for :func:`l2_svm_mfn`.
    """

    def __init__(self, X, y, cost, w, b, *, rows=None, outputs=None, schedule=None, n_threads=1, slicer=None):
        X = as_float64_design(X)
        self.X, self.y, self.cost, self.rows = X, y, cost, rows
        n_rows, self.n_features = X.shape
        self._n_threads = n_threads
        self._dense = not sp.issparse(X)
        self._Xb = row_blocks(X, schedule, n_threads)
        self._schedule = schedule
        self._n_blocks = len(self._Xb.kernel_bounds) - 1 if hasattr(self._Xb, "kernel_bounds") else 1
        self._row_nnz = np.diff(X.indptr) if sp.issparse(X) else np.full(n_rows, self.n_features)
        self._nnz = self._row_nnz.sum()
        values = X.data if sp.issparse(X) else X
        self.x_norm = float(np.sqrt(squared_norm(values)))
        self._slicer = RowSlicer() if slicer is None else slicer
        if outputs is not None:
            self.outputs = np.array(outputs, dtype=np.float64)
        else:
            self.outputs = _outputs(X, np.arange(n_rows, dtype=np.intp), w, b, n_threads)
        self._XJ = self._o_bar = self._ot_bar = None

    def objective(self, w, b, alpha, alpha_b):
        return mfn_objective(w, b, self.outputs, self.y, self.cost, alpha, self.rows, alpha_b)

    def newton_system(self):
        X, n_rows = self.X, self.X.shape[0]
        # Drop the previous step's slice before cutting the next one, so that two slices are never alive together.
        self._XJ = None
        active, J, cJ, tJ = _active_system(self.outputs, self.y, self.cost, self.rows, n_rows)
        if self._dense:
            XJ = DenseRows(X, J.astype(np.intp, copy=False), self._n_blocks)
        elif J.size == n_rows:
            XJ = self._Xb
        elif (J_nnz := self._row_nnz[J]).sum() > SLICE_FRACTION * self._nnz:
            # Nearly every row is active: CGLS on all of X with zero costs on the inactive rows, instead of a
            # near-copy of X.
            cJ, tJ = _scatter(J, cJ, n_rows), _scatter(J, tJ, n_rows)
            J = np.arange(n_rows)
            XJ = self._Xb
        else:
            XJ = row_blocks(self._slicer.take(X, J, J_nnz), self._schedule, self._n_threads)
        self._active, self._J, self._cJ, self._tJ, self._XJ = active, J, cJ, tJ, XJ
        self._oJ = self.outputs[J]
        return XJ.shape[0]

    def cgls(self, w, b, alpha, alpha_b, eps, max_iter, seeded):
        w_bar = np.array(w, dtype=np.float64)
        b_bar, converged, n_iter = cgls(self._XJ, self._cJ, self._tJ, self._oJ, w_bar, b, alpha, eps, max_iter, alpha_b)
        return w_bar, b_bar, converged, n_iter

    def newton_point(self, w_bar, b_bar, eps):
        self._o_bar = _outputs_after_cgls(self.X, self._J, self._oJ, w_bar, b_bar, self._n_threads)
        self._ot_bar = self._o_bar if self.rows is None else self._o_bar[self.rows]
        yo_bar = self.y * self._ot_bar
        active = self._active
        return bool(np.all(yo_bar[active] <= 1.0 + eps)) and bool(np.all(yo_bar[~active] >= 1.0 - eps))

    def restart(self):
        self._oJ = self._o_bar[self._J]

    def line_search(self, w, w_bar, b, b_bar, alpha, alpha_b, count):
        ot = self.outputs if self.rows is None else self.outputs[self.rows]
        delta = line_search(w, w_bar, b, b_bar, alpha, ot, self._ot_bar, self.y, self.cost, alpha_b)
        return delta, (_n_breakpoints(ot, self._ot_bar, self.y) if count else None)

    def step(self, delta):
        self.outputs += delta * (self._o_bar - self.outputs)

    def accept(self):
        self.outputs = self._o_bar


def newton_solve(
    rows,
    *,
    alpha,
    alpha_b=None,
    w=None,
    b=0.0,
    first=True,
    tolerance=None,
    stop="relative",
    rel_tol=RELATIVE_STOP_EPS,
    abs_tol=EPSILON,
    max_iter=MFNITERMAX,
    callback=None,
):
    """l2-SVM-MFN's Newton loop on a row backend (:class:`~skssl.svm.solvers._rows.NewtonRows`).

    ``rows`` holds the loss terms and their outputs at ``(w, b)``; the other
    parameters and the result are those of :func:`l2_svm_mfn` (whose
    ``callback`` events this loop sends; ``callback`` is used as given). The
    result's ``outputs`` are ``rows.outputs``.
    """
    alpha_b = alpha if alpha_b is None else alpha_b
    w = np.zeros(rows.n_features) if w is None else np.array(w, dtype=np.float64)
    b = float(b)
    eps_floor = CG_ROUNDING_FLOOR * rows.x_norm
    if tolerance is None:
        tolerance = CGTolerance()
    if first:  # SVMlin's ini == 0: a loose tolerance and a short first CGLS
        tolerance.eps = BIG_EPSILON
        cg_cap = SMALL_CGITERMAX
    else:
        cg_cap = CGITERMAX
    eps = tolerance.eps
    F = rows.objective(w, b, alpha, alpha_b)
    n_cg = 0
    n_empty = 0
    seed = None  # a better CGLS seed for the same system (heuristic 2)
    for it in range(1, max_iter + 1):
        if seed is None:
            n_system = rows.newton_system()
            n_empty += n_system == 0
            w0, b0, seeded = w, b, False
        else:
            (w0, b0), seed, seeded = seed, None, True
        start = None if callback is None else time.process_time()
        w_bar, b_bar, cg_ok, k = rows.cgls(w0, b0, alpha, alpha_b, max(eps, eps_floor), cg_cap, seeded)
        if callback is not None:
            cpu = time.process_time() - start
            notify(callback, "cgls", newton_step=it, n_rows=n_system, n_iter=k, converged=cg_ok, eps=eps, cpu_time=cpu)
        n_cg += k
        check_newton_point(w_bar, b_bar)
        cg_cap = CGITERMAX
        optimal = rows.newton_point(w_bar, b_bar, eps)
        if cg_ok and optimal:
            if eps > EPSILON:
                eps = tolerance.eps = EPSILON
                rows.restart()
                seed = (w_bar, b_bar)
                continue
            rows.accept()
            F = rows.objective(w_bar, b_bar, alpha, alpha_b)
            return _finish(callback, MFNResult(w_bar, b_bar, rows.outputs, F, it, n_cg, n_empty, True))
        delta, breaks = rows.line_search(w, w_bar, b, b_bar, alpha, alpha_b, callback is not None)
        w = w + delta * (w_bar - w)
        b = b + delta * (b_bar - b)
        rows.step(delta)
        F_old = F
        F = rows.objective(w, b, alpha, alpha_b)
        if callback is not None:
            notify(callback, "line_search", newton_step=it, n_breakpoints=breaks, step=delta, objective=F)
        gap = abs(F - F_old)
        if (stop == "relative" and gap < rel_tol * abs(F_old)) or (stop == "absolute" and gap < abs_tol):
            return _finish(callback, MFNResult(w, b, rows.outputs, F, it, n_cg, n_empty, True))
    return _finish(callback, MFNResult(w, b, rows.outputs, F, max_iter, n_cg, n_empty, False))


def l2_svm_mfn(
    X,
    y,
    cost,
    *,
    alpha,
    alpha_b=None,
    rows=None,
    w=None,
    b=0.0,
    outputs=None,
    first=True,
    tolerance=None,
    stop="relative",
    rel_tol=RELATIVE_STOP_EPS,
    abs_tol=EPSILON,
    max_iter=MFNITERMAX,
    schedule=None,
    n_threads=1,
    slicer=None,
    callback=None,
):
    """Minimize the l2-SVM objective by the modified finite Newton method.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data (see :func:`~skssl.svm.kernels._validation.as_float64_design`); never modified.
    y : ndarray of shape (n_terms,)
        Target (+1 / -1) of each loss term.
    cost : ndarray of shape (n_terms,)
        Non-negative cost of each loss term.
    alpha : float
        Regularization of ``w`` (> 0).
    alpha_b : float, default=None
        Regularization of ``b`` (> 0); ``None`` takes ``alpha``, SVMlin's
        objective.
    rows : ndarray of int of shape (n_terms,), default=None
        Row of ``X`` of each term; ``None`` means one term per row.
    w : ndarray of shape (n_features,), default=None
        Seed (zeros when None). Not modified.
    b : float, default=0.0
        Seed of the bias.
    outputs : ndarray of shape (n_rows,), default=None
        ``X @ w + b`` at the seed if known (computed otherwise). Not modified.
    first : bool, default=True
        ``True`` for a solve from scratch (SVMlin's ``ini == 0``): start at
        ``BIG_EPSILON`` with the first CGLS capped at ``SMALL_CGITERMAX``.
        ``False`` for a seeded re-solve: start at ``tolerance.eps``.
    tolerance : CGTolerance, default=None
        The tolerance state shared by the solves of one fit; updated in place.
    stop : {"relative", "absolute"}, default="relative"
        Stop when ``|F - F_old| < rel_tol |F_old|`` (SVMlin's ``L2_SVM_MFN``)
        or when ``|F - F_old| < abs_tol`` (SVMlin's ``optimize_w`` in DA).
    rel_tol, abs_tol : float
        Tolerances of the two rules.
    max_iter : int, default=MFNITERMAX
        Cap on Newton steps.
    schedule : ThreadSchedule, default=None
        The fit's active thread schedule (see :func:`skssl.svm.kernels._rowblocks.fit_threads`):
        the products run over row blocks; ``None`` computes them in this thread.
    n_threads : int, default=1
        Threads of the row-block products.
    slicer : RowSlicer, default=None
        Storage for the active rows, shared by the solves of one fit so that
        they reuse one buffer (a new one when None).
    callback : callable, default=None
        Called as ``callback(event)`` with a read-only
        :class:`~skssl.svm._callback.SolverEvent` (``None``: the one
        :func:`~skssl.svm._callback.solver_callback` installed, if any):

        ``"cgls"`` after each CGLS solve (``newton_step``, ``n_rows``, ``n_iter``,
        ``converged``, ``eps``, ``cpu_time``), ``"line_search"`` after each line
        search (``newton_step``, ``n_breakpoints``, ``step``, ``objective``) and
        ``"mfn"`` on return (``n_iter``, ``n_cg_iter``, ``n_empty_steps``,
        ``converged``, ``objective``).

    Returns
    -------
    result : MFNResult
    """
    callback = current_callback(callback)
    X = as_float64_design(X)  # what the estimators pass already (no copy then)
    w = np.zeros(X.shape[1]) if w is None else np.array(w, dtype=np.float64)
    b = float(b)
    backend = MemoryRows(
        X, y, cost, w, b, rows=rows, outputs=outputs, schedule=schedule, n_threads=n_threads, slicer=slicer
    )
    return newton_solve(
        backend,
        alpha=alpha,
        alpha_b=alpha_b,
        w=w,
        b=b,
        first=first,
        tolerance=tolerance,
        stop=stop,
        rel_tol=rel_tol,
        abs_tol=abs_tol,
        max_iter=max_iter,
        callback=callback,
    )


def check_newton_point(w, b):
    """Raise ``FloatingPointError`` unless the Newton point ``(w, b)`` is finite (CGLS overflowed)."""
    if not (np.isfinite(b) and np.isfinite(w).all()):
        raise FloatingPointError(
            "l2-SVM-MFN produced non-finite weights (overflow in CGLS); the data are too large or too "
            "ill-conditioned for float64: scale X first (e.g. MaxAbsScaler or StandardScaler)."
        )


def _n_breakpoints(o, o_bar, y):
    """Number of terms that enter or leave the active set on the way from ``o`` to ``o_bar`` (a callback field)."""
    slope = y * (o_bar - o)
    active = y * o < 1.0
    return int(np.count_nonzero((active & (slope > 0)) | (~active & (slope < 0))))


def _finish(callback, result):
    """``result``, reported to ``callback`` (if any) as the ``"mfn"`` event."""
    if callback is not None:
        fields = ("n_iter", "n_cg_iter", "n_empty_steps", "converged", "objective")
        notify(callback, "mfn", **{name: getattr(result, name) for name in fields})
    return result
