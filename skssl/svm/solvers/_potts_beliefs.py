"""The Potts p-step: the class beliefs of the unlabeled rows under the class-fraction constraints.

For fixed weights the beliefs are a softmax of the rows' energies with one
multiplier per class, found by Newton's method on the convex dual of this
entropy-regularised transport problem (:func:`potts_p_step`), called by the
annealing of :mod:`skssl.svm.solvers._potts`. The derivation and the solver's
decisions (line search, continuation, committed rows) are in the user guide,
"Mathematical formulation of the linear S3VMs": its section "The Potts model"
and the Potts part of "Implementation decisions".
"""

import warnings

import numpy as np
from scipy.optimize import brentq
from sklearn.exceptions import ConvergenceWarning

from ...utils._warnings import user_stacklevel

__all__ = ["P_TOL", "potts_p_step"]

#: Largest violation of a class fraction the p-step accepts.
P_TOL = 1e-11
_P_MAX_NEWTON = 200
#: Score gap (in units of T) past which a row's beliefs are one class to float64 precision.
_COMMITTED_GAP = 40.0
#: Extra gap (in units of T) a committed row must have when it is set aside; the
#: multipliers may move by half of it before the rows are sorted again.
_DRIFT_MARGIN = 20.0
#: Continuation levels below this multiple of the energies' spread are skipped:
#: there a unit of score ``(nu_k - e_jk) / T`` is below the rounding of the energies.
_UNRESOLVED = float(np.finfo(np.float64).eps)


def _softmax(nu, E, T):
    A = nu - E
    A /= T
    A -= A.max(axis=1, keepdims=True)
    np.exp(A, out=A)
    A /= A.sum(axis=1, keepdims=True)
    return A


def _column_means(P, weight):
    """``mean_j p_j``, or ``sum_j a_j p_j`` for weights ``a`` summing to 1."""
    return P.mean(axis=0) if weight is None else weight @ P


class _DualRows:
    """The rows of the p-step's dual, with the rows committed to one class set aside.

    A row whose best score ``(nu_k - e_jk) / T`` beats its second best by
    more than ``_COMMITTED_GAP`` has every other probability below
    ``exp(-_COMMITTED_GAP)``: it adds its weight to its best class's fraction
    and nothing to the Hessian, to float64 precision. Such rows are counted
    once per reference point and only the others (near a class boundary, or
    tied) are evaluated while ``nu`` stays within ``_DRIFT_MARGIN * T / 2``
    of it (every gap moves by at most twice the largest change of ``nu``).
    At low temperature almost every row is committed, and a dual evaluation
    costs a few rows instead of all of them.
    """

    def __init__(self, E, T, weight):
        self.E, self.T, self.weight = E, T, weight
        self.u, self.K = E.shape
        self.nu_ref = None

    def rebase(self, nu):
        """Sort the rows into committed and free ones at ``nu``."""
        S = nu - self.E
        S /= self.T
        top2 = np.partition(S, self.K - 2, axis=1)[:, -2:] if self.K > 1 else S
        gap = top2[:, -1] - top2[:, 0]
        free = gap <= _COMMITTED_GAP + _DRIFT_MARGIN
        self.nu_ref = np.array(nu, dtype=np.float64)
        if free.mean() > 0.5:
            # Most rows are free: index arrays would cost more than they save.
            self.rows, self.E_free, self.a_free, self.committed_mass = None, self.E, self.weight, 0.0
            return
        self.rows = np.flatnonzero(free)
        committed = ~free
        best = S[committed].argmax(axis=1)
        if self.weight is None:
            self.committed_mass = np.bincount(best, minlength=self.K) / self.u
            self.a_free = None
        else:
            self.committed_mass = np.bincount(best, weights=self.weight[committed], minlength=self.K)
            self.a_free = self.weight[self.rows]
        self.E_free = self.E[self.rows]

    def evaluate(self, nu):
        """``(means, P_free, a_free)``: the class fractions at ``nu`` and the free rows' beliefs and weights.

        ``a_free`` is None for unit weights (each row counts ``1/u``).
        """
        if self.nu_ref is None or (
            self.rows is not None and 2.0 * np.abs(nu - self.nu_ref).max() > _DRIFT_MARGIN * self.T
        ):
            self.rebase(nu)
        P = _softmax(nu, self.E_free, self.T)
        if self.a_free is None:
            means = P.sum(axis=0) / self.u
        else:
            means = self.a_free @ P
        return self.committed_mass + means, P, self.a_free


def _newton(E, T, r, nu, max_newton, weight=None):
    """Newton with exact line search on the dual; returns (P, nu, converged).

    ``weight``: None, or row weights normalized to sum 1. The iteration runs
    on the free rows of :class:`_DualRows`; the returned ``P`` and the final
    test of the class fractions use every row.
    """
    u, K = E.shape
    rows = _DualRows(E, T, weight)
    means, P, a = rows.evaluate(nu)  # sorts the rows at the first call
    for _ in range(max_newton):
        grad = means - r
        if np.abs(grad).max() <= P_TOL:
            break
        # Hessian of D in nu: (diag(sum_j a_j p_j) - P^T diag(a) P) / T, K x K, with
        # a_j = 1/u unweighted; committed rows add nothing to it.
        if a is None:
            H = (np.diag(P.sum(axis=0)) - P.T @ P) / (u * T)
        else:
            H = (np.diag(a @ P) - (P * a[:, None]).T @ P) / T
        Hr = H[1:, 1:]
        ridge = 1e-13 * max(np.trace(Hr), np.finfo(float).tiny)
        d = np.zeros(K)
        try:
            d[1:] = -np.linalg.solve(Hr + ridge * np.eye(K - 1), grad[1:])
        except np.linalg.LinAlgError:
            d[1:] = -T * grad[1:]
        slope0 = grad @ d
        if not np.isfinite(slope0) or slope0 >= 0:
            d = np.zeros(K)
            d[1:] = -T * grad[1:]
            slope0 = grad @ d

        seen = {}

        def dphi(t, d=d, nu=nu, seen=seen):
            # Remembered per t: the free rows may be sorted again between two
            # evaluations (a change of ~exp(-_COMMITTED_GAP)), and brentq must
            # see at the bracket's ends the signs the bracketing saw.
            if t not in seen:
                seen[t] = float((rows.evaluate(nu + t * d)[0] - r) @ d)
            return seen[t]

        # Bracket the root of the increasing directional derivative, then brentq.
        lo, hi = 0.0, 1.0
        s_hi = dphi(hi)
        while s_hi < 0 and hi < 1e30:
            lo, hi = hi, 2.0 * hi
            s_hi = dphi(hi)
        if s_hi <= 0:
            t = hi
        elif lo == 0.0 and dphi(0.0) >= 0:
            break  # no descent left at float precision
        else:
            t = brentq(dphi, lo, hi, xtol=1e-14 * hi, rtol=4 * np.finfo(float).eps, maxiter=200)
        nu = nu + t * d
        means, P, a = rows.evaluate(nu)
    P = _softmax(nu, E, T)
    grad = _column_means(P, weight) - r
    return P, nu, bool(np.abs(grad).max() <= P_TOL)


def _continuation_temperatures(T, spread):
    """``T, 10 T, 100 T, ...`` up to the first at or above ``spread``, without those below ``eps * spread``.

    ``T`` itself is always kept (see the user guide's implementation decisions, bounded continuation).
    """
    temps = [T]
    while temps[-1] < max(spread, T):
        temps.append(10.0 * temps[-1])
    return [T] + [temp for temp in temps[1:] if temp >= _UNRESOLVED * spread]


def potts_p_step(E, T, r, nu=None, weight=None):
    """Beliefs minimizing ``J_T`` over ``P`` for fixed energies.

    Solves ``min_P sum_j s_j (sum_k p_jk e_jk + T sum_k p_jk log p_jk)``
    subject to ``sum_k p_jk = 1`` and ``sum_j s_j p_jk / sum_j s_j = r_k``
    (``s_j = 1`` without weights).

    Parameters
    ----------
    E : ndarray of shape (n_unlabeled, n_classes)
        Energies ``e_jk`` (see :func:`skssl.svm.solvers._potts.potts_energies`).
    T : float
        Temperature (> 0).
    r : ndarray of shape (n_classes,)
        Class fractions, positive, summing to 1.
    nu : ndarray of shape (n_classes,), default=None
        Warm start of the multipliers (energy units); ``T log r`` when None.
    weight : ndarray of shape (n_unlabeled,), default=None
        Positive row weights ``s_j``: the class fractions are weighted means.
        ``None`` gives every row weight 1. The solution does not depend on
        their scale.

    Returns
    -------
    P : ndarray of shape (n_unlabeled, n_classes)
        The beliefs: rows sum to 1, (weighted) column means equal ``r`` to
        ``P_TOL``.
    nu : ndarray of shape (n_classes,)
        The multipliers, with ``nu_0 = 0``.
    """
    E = np.asarray(E, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    # A common shift of each row of E leaves P unchanged: shift the row
    # minimum to 0, so energies of any size keep their differences.
    E = E - E.min(axis=1, keepdims=True)
    with np.errstate(over="ignore"):
        ratio = float(E.max() / T) if E.size else 0.0
    if not np.isfinite(ratio):
        raise ValueError(
            f"The temperature T={T:g} is too small for energies spread over {float(E.max()):g}: "
            "their ratio overflows float64."
        )
    if weight is not None:
        weight = np.asarray(weight, dtype=np.float64)
        if weight.shape != (E.shape[0],) or not np.all(weight > 0) or not np.isfinite(weight).all():
            raise ValueError(f"weight must hold one positive finite number per row of E ({E.shape[0]}).")
        weight = weight / weight.sum()
    nu0 = T * np.log(r) if nu is None else np.asarray(nu, dtype=np.float64)
    nu0 = nu0 - nu0[0]
    P, nu_out, ok = _newton(E, T, r, nu0, max_newton=30, weight=weight)
    if ok:
        return P, nu_out
    # Continuation: solve at 10^m T first, warm-starting downwards.
    spread = float(np.ptp(E)) if E.size else 0.0
    nu_c = nu0
    for temp in _continuation_temperatures(T, spread)[::-1]:
        P, nu_c, ok = _newton(E, temp, r, nu_c, max_newton=_P_MAX_NEWTON, weight=weight)
    if not ok:
        warnings.warn(
            f"The Potts p-step did not meet the class fractions to {P_TOL:g} at T={T:.3g} "
            f"(largest violation {np.abs(_column_means(P, weight) - r).max():.3g}).",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return P, nu_c - nu_c[0]
