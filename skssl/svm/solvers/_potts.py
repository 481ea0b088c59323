"""Multi-class deterministic annealing with the Potts glass (the K-class DA S3VM).

Every unlabeled row carries one distribution over the K classes; the K
one-vs-rest l2-SVMs (w-step, by l2-SVM-MFN) and the distributions (p-step,
:mod:`skssl.svm.solvers._potts_beliefs`) are optimized alternately while a
temperature falls (the loop of :mod:`skssl.svm.solvers._annealing`, shared with the
binary DA), and the model with the lowest zero-temperature objective is
returned. Each class's w-step is the binary DA's, on its one-vs-rest
:class:`~skssl.svm.solvers._problem.S3VMProblem`. For K = 2 it is the binary DA of
:mod:`skssl.svm.solvers._da`. The model, its derivation, the row weights and the
implementation decisions are in the user guide, "Mathematical formulation of the linear S3VMs": its section "The
Potts model" and the Potts part of "Implementation decisions".
"""

from dataclasses import dataclass
from functools import partial

import numpy as np
from joblib import Parallel, delayed

from ._annealing import DA_INIT_TEMP, DA_INNER_ITERMAX, DA_OUTER_ITERMAX, BestPoint, anneal
from ._annealing import AnnealingCounts, AnnealingSchedule, AnnealingSteps
from ._da import BeliefSteps
from ._mfn import MFNITERMAX
from ._potts_beliefs import potts_p_step
from ._problem import BeliefWStep, S3VMProblem
from ..kernels._rowblocks import share_threads, fit_threads

__all__ = [
    "PottsResult",
    "potts_annealing",
    "potts_energies",
    "potts_entropy_bits",
    "potts_kl_bits",
    "potts_objective",
]

#: Largest multiple of the last alternation's step tried by the extrapolation.
EXTRAPOLATION_MAX = 8.0
_CLIP = 1e-8


@dataclass
class PottsResult(AnnealingCounts):
    """Solution of one Potts DA fit.

    Attributes
    ----------
    W : ndarray of shape (n_classes, n_features)
        Weights of the lowest-objective point.
    b : ndarray of shape (n_classes,)
        Biases.
    outputs : ndarray of shape (n_rows, n_classes)
        ``X @ W.T + b``.
    objective : float
        The zero-temperature objective at that point (the lowest seen).
    P : ndarray of shape (n_unlabeled, n_classes)
        Final beliefs.
    n_w_steps : int
        Number of w-steps (each solves every class), the first one included.
    n_temperatures : int
        Number of temperatures visited (outer iterations, capped by
        ``max_iter``); 0 without unlabeled rows.
        :class:`~skssl.svm.PottsDeterministicAnnealingSVC`'s ``n_iter_`` is
        this count (at least 1), not ``n_w_steps``.
    converged : bool
        Whether the mean entropy fell to ``tol`` (rather than the temperature
        cap ending the annealing).
    inner_converged : bool
        Whether every temperature ended on the KL rule (rather than its cap).
    mfn_converged : bool
        Whether every l2-SVM-MFN solve met its stopping rule.
    n_extrapolated : int
        Number of alternations that moved to an extrapolated point
        (K >= 3 only; see the user guide's implementation decisions).
    """

    W: np.ndarray
    b: np.ndarray
    outputs: np.ndarray
    objective: float
    P: np.ndarray
    n_extrapolated: int = 0


def _l2(z):
    s = np.maximum(0.0, 1.0 - z)
    return s * s


def potts_energies(outputs, unlabeled_weight):
    """``e_jk = (lam_u / 2) (l2(o_jk) - l2(-o_jk))`` for unlabeled outputs of shape (u, K)."""
    return 0.5 * unlabeled_weight * (_l2(outputs) - _l2(-outputs))


def potts_entropy_bits(P, weight=None):
    """Mean over rows of the entropy ``-sum_k p_k log2 p_k`` (``0 log 0 = 0``), weighted if given."""
    if P.shape[0] == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * np.log2(np.where(P > 0, P, 1.0)), 0.0)
    if weight is None:
        return float(-terms.sum() / P.shape[0])
    return float(-(weight @ terms.sum(axis=1)) / weight.sum())


def potts_kl_bits(P, Q, weight=None):
    """Mean over rows of ``KL(p_j || q_j)`` in bits, both clipped to ``[1e-8, 1 - 1e-8]``, weighted if given."""
    P = np.clip(P, _CLIP, 1 - _CLIP)
    Q = np.clip(Q, _CLIP, 1 - _CLIP)
    if weight is None:
        return float((P * np.log2(P / Q)).sum() / P.shape[0])
    return float(weight @ (P * np.log2(P / Q)).sum(axis=1) / weight.sum())


def _row_total(values, sample_weight, rows):
    """``(total, count)`` of per-row terms: ``values`` has one row (1-d: one entry) per row of ``rows``.

    Unweighted, the sum of all entries and the number of rows; weighted by
    ``sample_weight[rows]``, the weighted sum of the row sums and the weight
    sum. ``total / count`` is the (weighted) mean over rows.
    """
    if sample_weight is None:
        return values.sum(), values.shape[0]
    s = sample_weight[rows]
    per_row = values if values.ndim == 1 else values.sum(axis=1)
    return s @ per_row, s.sum()


def _regularized_labeled_part(W, b, outputs, Y, labeled, alpha, sample_weight, alpha_b=None):
    """``1/4 [alpha |W|^2 + alpha_b |b|^2 + mean over labeled rows of sum_k l2(y_ik o_ik)]`` (both objectives)."""
    reg = alpha * np.einsum("kf,kf->", W, W) + (alpha if alpha_b is None else alpha_b) * (b @ b)
    total, count = _row_total(_l2(Y[labeled] * outputs[labeled]), sample_weight, labeled)
    return 0.25 * (reg + total / count)


def potts_objective(W, b, outputs, Y, labeled, alpha, unlabeled_weight, sample_weight=None, alpha_b=None):
    """Zero-temperature Potts objective (stated in the user guide's formulation of the linear S3VMs).

    Parameters
    ----------
    W : ndarray of shape (n_classes, n_features)
    b : ndarray of shape (n_classes,)
    outputs : ndarray of shape (n_rows, n_classes)
        ``X @ W.T + b``.
    Y : ndarray of shape (n_rows, n_classes)
        +1 / -1 one-vs-rest targets (rows not labeled are ignored).
    labeled : ndarray of bool of shape (n_rows,)
    alpha, unlabeled_weight : float
    sample_weight : ndarray of shape (n_rows,), default=None
        Positive row weights: the labeled and the unlabeled means become
        weighted means. ``None``: unit weights.
    alpha_b : float, default=None
        Regularization of the biases; ``None`` takes ``alpha``.

    Returns
    -------
    F : float
    """
    F = _regularized_labeled_part(W, b, outputs, Y, labeled, alpha, sample_weight, alpha_b)
    o_unl = outputs[~labeled]
    if o_unl.shape[0]:
        neg = _l2(-o_unl)
        # cost of class c for row j: sum_k l2(-o_jk) + l2(o_jc) - l2(-o_jc)
        per_class = neg.sum(axis=1, keepdims=True) + _l2(o_unl) - neg
        total, count = _row_total(per_class.min(axis=1), sample_weight, ~labeled)
        F += 0.25 * unlabeled_weight * total / count
    return float(F)


def annealed_objective(W, b, outputs, Y, labeled, P, T, alpha, unlabeled_weight, sample_weight=None, alpha_b=None):
    """``J_T(W, P)``, the objective the alternating steps minimize at temperature ``T``.

    ``sample_weight`` (n_rows,), if given, turns both means into weighted means; ``alpha_b`` (``alpha`` when None)
    regularizes the biases.
    """
    J = _regularized_labeled_part(W, b, outputs, Y, labeled, alpha, sample_weight, alpha_b)
    o_unl = outputs[~labeled]
    if o_unl.shape[0]:
        loss = P * _l2(o_unl) + (1.0 - P) * _l2(-o_unl)
        total, count = _row_total(loss, sample_weight, ~labeled)
        J += 0.25 * unlabeled_weight * total / count
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
        total, count = _row_total(ent, sample_weight, ~labeled)
        J += 0.5 * T * total / count
    return float(J)


def _solve_class(step, p, first, exact):
    """One class's w-step in a thread pool of its own (classes may be solved at once)."""
    with fit_threads(step.n_threads) as threads:
        step.solve(p, first, threads, exact)


def potts_annealing(
    X,
    y,
    labeled,
    *,
    alpha,
    unlabeled_weight,
    class_fractions,
    alpha_b=None,
    tol=1e-6,
    max_iter=DA_OUTER_ITERMAX,
    max_inner_iter=DA_INNER_ITERMAX,
    max_newton_iter=MFNITERMAX,
    initial_temperature=DA_INIT_TEMP,
    n_threads=None,
    symmetric_binary=True,
    verbose=0,
    callback=None,
    sample_weight=None,
):
    """Potts deterministic annealing on a K-class problem.

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data, not modified.
    y : ndarray of int of shape (n_rows,)
        Class index in ``0..K-1`` on labeled rows (other entries ignored).
    labeled : ndarray of bool of shape (n_rows,)
        Labeled rows.
    alpha, unlabeled_weight : float
        ``lam`` and ``lam_u``.
    class_fractions : ndarray of shape (n_classes,)
        ``r``: positive, summing to 1.
    alpha_b : float, default=None
        Regularization of the biases; ``None`` takes ``alpha`` (SVMlin's).
    tol : float, default=1e-6
        Threshold of the mean KL divergence (inner loop) and of the mean
        entropy (outer loop), in bits.
    max_iter : int, default=DA_OUTER_ITERMAX
        Cap on the temperatures visited.
    max_inner_iter : int, default=DA_INNER_ITERMAX
        Cap on the alternations of p- and w-steps at one temperature.
    max_newton_iter : int, default=MFNITERMAX
        Newton steps cap of each l2-SVM-MFN solve.
    initial_temperature : float, default=DA_INIT_TEMP
        The first temperature over ``unlabeled_weight`` (SVMlin's 10).
    n_threads : int, default=None
        Threads (joblib's ``n_jobs`` convention: ``None`` is 1 outside a
        joblib backend context, -1 all cores): up to ``n_threads`` classes
        are solved at once in a w-step (joblib threads), each with
        ``n_threads // (classes at once)`` threads for its row-block
        products, as one-vs-rest shares them.
    symmetric_binary : bool, default=True
        For K = 2, solve the class-1 problem only and set ``w_0 = -w_1``.
    verbose : int
        Print the annealing progress when > 0.
    callback : callable, default=None
        Receives the annealing loop's events (see
        :func:`~skssl.svm.solvers._annealing.anneal`: ``objective`` is the
        zero-temperature objective, ``annealed_objective`` is ``J_T(W, P)``;
        for K >= 3 a ``"w"`` event precedes the extrapolation, whose point the
        next ``"p"`` event sees) and every class's l2-SVM-MFN events (see
        :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`), from worker threads when classes
        are solved at once. ``None`` takes the callback installed by
        :func:`~skssl.svm._callback.solver_callback`, if any.
    sample_weight : ndarray of shape (n_rows,), default=None
        Positive row weights ``s``: a row's loss terms, its entropy and its
        share of the class fractions are scaled by its weight, and the means
        over labeled and over unlabeled rows become weighted means (see the
        user guide's formulation of the linear S3VMs). ``None``: unit weights.

    Returns
    -------
    result : PottsResult
    """
    r = np.asarray(class_fractions, dtype=np.float64)
    K = r.shape[0]
    unl = np.flatnonzero(~labeled)
    n_unl = unl.size
    Y = np.where(np.asarray(y)[:, None] == np.arange(K)[None, :], 1.0, -1.0)
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if sw is not None and (sw.shape != (X.shape[0],) or not np.all(sw > 0) or not np.isfinite(sw).all()):
        raise ValueError(f"sample_weight must hold one positive finite weight per row of X ({X.shape[0]}).")
    schedule = AnnealingSchedule(tol, max_iter, max_inner_iter, verbose, callback, initial_temperature)
    mirror = symmetric_binary and K == 2
    solved = [1] if mirror else list(range(K))
    n_parallel_classes, n_block_threads = share_threads(n_threads, len(solved))
    # Each class's w-step is the binary DA's, on that class's one-vs-rest problem.
    problems = {
        k: BeliefWStep(
            X,
            S3VMProblem(
                Y[:, k], labeled, alpha=alpha, unlabeled_weight=unlabeled_weight, sample_weight=sw, alpha_b=alpha_b
            ),
            max_iter=max_newton_iter,
            n_threads=n_block_threads,
            callback=schedule.callback,
        )
        for k in solved
    }
    # The unlabeled rows' weights of mean 1 (None for unit weights), the same in every class's problem.
    unl_weight = problems[solved[0]].problem.unl_weight
    parallel = Parallel(n_jobs=n_parallel_classes, prefer="threads") if n_parallel_classes > 1 else None

    def w_step(P, first, exact=True):
        """Solve every class at beliefs ``P``; ``exact=False``: one Newton step each."""
        cols = [P[:, k] for k in solved]
        if parallel is None or n_unl == 0:
            for k, p in zip(solved, cols):
                _solve_class(problems[k], p, first, exact)
        else:
            parallel(delayed(_solve_class)(problems[k], p, first, exact) for k, p in zip(solved, cols))
        if mirror:
            pr = problems[1]
            W = np.vstack([-pr.w, pr.w])
            b = np.array([-pr.b, pr.b])
            outputs = np.column_stack([-pr.outputs, pr.outputs])
        else:
            W = np.vstack([problems[k].w for k in range(K)])
            b = np.array([problems[k].b for k in range(K)])
            outputs = np.column_stack([problems[k].outputs for k in range(K)])
        return W, b, outputs

    binary_beliefs = BeliefSteps(r[1], unl_weight)  # K = 2: the binary DA's p-steps

    def p_step(E, T, nu):
        if K == 2:
            # The binary DA's own belief update: K = 2 costs what the binary DA costs
            # (see the user guide's implementation decisions).
            p1 = binary_beliefs(E[:, 1] - E[:, 0], T)
            return np.column_stack([1.0 - p1, p1]), nu
        return potts_p_step(E, T, r, nu, unl_weight)

    # K = 2 keeps the binary DA's iteration step for step (see the user guide's implementation decisions).
    accelerate = K > 2

    def reduced_objective(point, T, nu_start):
        """``min_P J_T`` at ``point = (W, b, outputs)`` with its minimizer: a p-step, no product with X."""
        W_g, b_g, out_g = point
        P_g, nu_g = potts_p_step(potts_energies(out_g[unl], unlabeled_weight), T, r, nu_start, unl_weight)
        return annealed_objective(W_g, b_g, out_g, Y, labeled, P_g, T, alpha, unlabeled_weight, sw, alpha_b), P_g, nu_g

    def offer(W, b, outputs):
        """The zero-temperature objective at ``(W, b, outputs)``, offered to the best point."""
        F = potts_objective(W, b, outputs, Y, labeled, alpha, unlabeled_weight, sw, alpha_b)
        best.offer(F, W, b, outputs)
        return F

    best = BestPoint()
    W = b = outputs = None  # the current point
    nu = None  # the p-step's multipliers, the seed of the next one
    next_p = None  # the p-step already solved by the extrapolation
    previous = None  # the point before the last w-step, when the next p-step extrapolates from it
    n_extrapolated = 0

    def annealing_w_step(P, T, first, last):
        nonlocal W, b, outputs, previous
        point = W, b, outputs
        W, b, outputs = w_step(P, first, exact=first or last or not accelerate)
        # Not the last alternation: the next p-step is at the same temperature and extrapolates first.
        previous = None if first or not accelerate or last else point
        return offer(W, b, outputs)

    def extrapolate(T):
        """Move along the last w-step while the reduced objective falls (K >= 3; it solves the next p-step)."""
        nonlocal W, b, outputs, next_p, n_extrapolated, previous
        (W_prev, b_prev, out_prev), previous = previous, None
        dW, db, dout = W - W_prev, b - b_prev, outputs - out_prev
        point_best = (W, b, outputs)
        J_best, P_best, nu_best = reduced_objective(point_best, T, nu)
        gamma = 1.0
        while gamma <= EXTRAPOLATION_MAX:
            point = (W + gamma * dW, b + gamma * db, outputs + gamma * dout)
            J_g, P_g, nu_g = reduced_objective(point, T, nu_best)
            if not J_g < J_best:
                break
            J_best, P_best, nu_best, point_best = J_g, P_g, nu_g, point
            gamma *= 2.0
        next_p = (P_best, nu_best)
        if point_best[0] is not W:
            n_extrapolated += 1
            W, b, outputs = point_best
            for k in solved:
                problems[k].set_point(W[k].copy(), b[k], outputs[:, k].copy())
            offer(W, b, outputs)

    def annealing_p_step(T):
        nonlocal nu, next_p
        if previous is not None:
            extrapolate(T)
        if next_p is None:
            E = potts_energies(outputs[unl], unlabeled_weight)
            if not np.isfinite(E).all():
                raise FloatingPointError(
                    "Potts DA's belief update got non-finite outputs; the data are too large for float64: "
                    "scale X first."
                )
            P, nu = p_step(E, T, nu)
        else:
            (P, nu), next_p = next_p, None
        return P

    def objective_at(P, T):
        """``J_T`` at the current point and beliefs ``P`` (for the callback)."""
        return annealed_objective(W, b, outputs, Y, labeled, P, T, alpha, unlabeled_weight, sw, alpha_b)

    measures = partial(potts_kl_bits, weight=unl_weight), partial(potts_entropy_bits, weight=unl_weight)
    steps = AnnealingSteps("Potts DA", annealing_w_step, annealing_p_step, *measures, objective_at)
    path = anneal(np.tile(r, (n_unl, 1)), steps, schedule, unlabeled_weight=unlabeled_weight, best=best)
    mfn_ok = all(pr.converged for pr in problems.values())
    return path.result(PottsResult, best, mfn_ok, n_extrapolated=n_extrapolated)
