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
_EPS = float(np.finfo(np.float64).eps)
#: Continuation levels below this multiple of the energies' spread are skipped:
#: there a unit of score ``(nu_k - e_jk) / T`` is below the rounding of the energies.
_UNRESOLVED = _EPS
#: The line search's derivative ``(means - r) @ d`` counts as zero below this
#: multiple of ``|d| @ (means + r)``: the rounding of the class fractions.
_ROUNDING = 4.0 * _EPS
_MAX_LINE_STEPS = 200


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


def _line_values(means, P, a, d, r, T, u):
    """``(dphi, dphi', rounding)`` of the line search along ``d`` from one dual evaluation.

    ``dphi = (means - r) @ d`` is the dual's directional derivative and
    ``dphi' = d^T H d`` its own, the beliefs' (weighted) variance of ``d``
    over ``T`` (``a``: the free rows' weights, None for ``1/u`` each;
    committed rows add nothing to it). ``rounding`` bounds the rounding
    error of ``dphi``.
    """
    scale = float(np.abs(d).max())
    if scale > 0:
        dn = d / scale  # no overflow in d * d where the energies are huge
        Pd = P @ dn
        var = P @ (dn * dn) - Pd * Pd
        curv = (float(var.sum()) / u if a is None else float(a @ var)) / T * scale * scale
    else:
        curv = 0.0
    if not np.isfinite(curv):
        curv = 0.0  # no use to Newton: the root search bisects
    return float((means - r) @ d), curv, _ROUNDING * float(np.abs(d) @ (means + r))


def _grown_end(t, f, df):
    """The next trial end of a bracket past ``t``, where ``f < 0``: twice Newton's step, ``2 t`` to ``16 t``."""
    if -2.0 * f >= 15.0 * t * df:  # also where df <= 0: no Newton step
        return 16.0 * t
    return max(2.0 * t, t - 2.0 * f / df)


def _bracketed_root(f, lo, hi, xtol):
    """Root of the increasing ``f`` in ``[lo, hi]``, where ``f(lo) < 0 < f(hi)``: safeguarded Newton.

    ``f(t)`` returns ``(value, derivative, rounding)``, the last the size of
    the value's rounding error. A Newton step from the last point is taken
    when it lands inside the bracket and is at most half the step before it
    (Numerical Recipes' ``rtsafe``), unless the last Newton step did not
    halve ``|f|``. Otherwise the step is a false position between the
    bracket's ends (Illinois: an end kept twice has its value halved), or a
    bisection (geometric across a wide bracket) after a false position that
    did not halve the bracket: at low temperature ``f`` can be a staircase on
    which neither Newton nor the secant tells much. The bracket shrinks to
    the signs of the values seen. It stops when a Newton step is below
    ``xtol + 4 eps |t|`` (brentq's tolerance), or the bracket below twice it
    (its midpoint is returned), or at a point whose value is zero to its
    rounding.
    """
    rtol = 4.0 * _EPS
    f_lo, f_hi = f(lo)[0], f(hi)[0]
    t = lo if -f_lo < f_hi else hi
    ft, dft, _ = f(t)
    step_old = step = hi - lo
    newton_ok = True  # False after a Newton step that did not halve |f|
    secant_ok = True  # False after a false position that did not halve the bracket
    kept = 0  # +1: lo was kept at the last evaluation, -1: hi was
    for _ in range(_MAX_LINE_STEPS):
        width = hi - lo
        # The Newton point t - ft / dft lies in (lo, hi), tested without dividing.
        newton = newton_ok and (t - hi) * dft < ft < (t - lo) * dft and abs(2.0 * ft) <= abs(step_old * dft)
        secant = False
        if newton:
            t_new = t - ft / dft
            if abs(ft / dft) <= xtol + rtol * abs(t_new):
                return t_new
        else:
            if width <= 2.0 * (xtol + rtol * max(abs(lo), abs(hi))):
                return lo + 0.5 * width
            t_new = lo + width * (-f_lo / (f_hi - f_lo))
            secant = (secant_ok or lo == 0.0) and lo < t_new < hi
            if not secant:
                t_new = (lo * hi) ** 0.5 if lo > 0 and hi > 4.0 * lo else lo + 0.5 * width
        step_old, step = step, abs(t_new - t)
        f_old = ft
        t = t_new
        ft, dft, rounding = f(t)
        if abs(ft) <= rounding:
            return t
        if ft < 0:
            lo, f_lo = t, ft
            if kept == -1:
                f_hi *= 0.5
            kept = -1
        else:
            hi, f_hi = t, ft
            if kept == 1:
                f_lo *= 0.5
            kept = 1
        newton_ok = not newton or abs(ft) <= 0.5 * abs(f_old)
        if secant:
            secant_ok = hi - lo <= 0.5 * width
    return t


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

        # (dphi, dphi', rounding) along d, remembered per t: the free rows may
        # be sorted again between two evaluations (a change of
        # ~exp(-_COMMITTED_GAP)), and the bracket's ends must keep the signs
        # the bracketing saw. t = 0 is the point just evaluated.
        seen = {0.0: _line_values(means, P, a, d, r, T, u)}

        def dphi(t, d=d, nu=nu, seen=seen):
            if t not in seen:
                seen[t] = _line_values(*rows.evaluate(nu + t * d), d, r, T, u)
            return seen[t]

        # Bracket the root of the increasing directional derivative, then a
        # safeguarded Newton on it. A point where the derivative is zero to
        # its rounding is the line's minimum; where it is so at t = 0, no
        # descent is left.
        lo, hi = 0.0, 1.0
        s_hi, ds_hi, noise_hi = dphi(hi)
        while s_hi < -noise_hi and hi < 1e30:
            # Past the root that Newton predicts from hi, by a factor 2 to 16.
            lo, hi = hi, min(_grown_end(hi, s_hi, ds_hi), 2.0**100)
            s_hi, ds_hi, noise_hi = dphi(hi)
        if s_hi <= 0:
            t = hi
        elif lo == 0.0 and seen[0.0][0] >= -seen[0.0][2]:
            break  # no descent left at float precision
        elif s_hi <= noise_hi:
            t = hi
        else:
            # brentq's tolerance of the doubling bracket [lo, 2 lo] (or [0, 1]).
            t = _bracketed_root(dphi, lo, hi, xtol=1e-14 * (2.0 * lo if lo > 0 else hi))
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
