"""The deterministic-annealing driver shared by the binary DA S3VM and Potts DA.

Both variants lower a temperature ``T`` from ``10 unlabeled_weight`` by a
factor 1.5 and, at each temperature, alternate a belief update (p-step) and
a weight solve (w-step) until the beliefs stop moving (mean KL divergence
below ``tol``); the annealing ends when the beliefs' mean entropy falls to
``tol``, when a temperature leaves them unchanged (frozen), or at the
temperature cap. :func:`anneal` is that loop; each variant gives its
:class:`AnnealingSteps` (its steps, divergence and entropy) and keeps the
lowest-objective point in a :class:`BestPoint`; the caller's options are an
:class:`AnnealingSchedule`. The loop reports its progress to the schedule's
callback (see :mod:`skssl.svm._callback`).
"""

from dataclasses import dataclass

import numpy as np

from .._callback import current_callback, notify

__all__ = [
    "DA_ANNEALING_RATE",
    "DA_INIT_TEMP",
    "DA_INNER_ITERMAX",
    "DA_OUTER_ITERMAX",
    "AnnealingCounts",
    "AnnealingPath",
    "AnnealingSchedule",
    "AnnealingSteps",
    "anneal",
]

DA_INIT_TEMP = 10.0
DA_ANNEALING_RATE = 1.5
DA_INNER_ITERMAX = 100
DA_OUTER_ITERMAX = 30


@dataclass(frozen=True)
class AnnealingSchedule:
    """The options of an annealing path, as the solver's caller gives them.

    ``tol`` (bits) ends a temperature (divergence) and the annealing (entropy);
    ``max_iter`` caps the temperatures and ``max_inner_iter`` the alternations at
    one; ``verbose > 0`` prints a line per temperature; ``callback`` receives the
    events :func:`anneal` documents (``None``: the installed one, if any);
    ``initial_temperature`` is the first temperature over ``lam_u`` (SVMlin's 10).
    """

    tol: float
    max_iter: int
    max_inner_iter: int
    verbose: int = 0
    callback: object = None
    initial_temperature: float = DA_INIT_TEMP

    def __post_init__(self):
        object.__setattr__(self, "callback", current_callback(self.callback))


@dataclass(frozen=True)
class AnnealingSteps:
    """What an annealing variant gives the loop.

    ``w_step(beliefs, T, first, last) -> F`` solves the weights at ``beliefs``
    from the current point (``first``: from scratch; ``last``: the last
    alternation at ``T``), offers the point to the best point and returns its
    objective; ``p_step(T) -> beliefs``; ``divergence(new, old)`` and
    ``entropy(beliefs)``, means in bits; ``annealed_objective(beliefs, T)``, the
    ``J_T`` reported to the callback only (``None``: none). ``name`` labels the
    ``verbose`` lines.
    """

    name: str
    w_step: object
    p_step: object
    divergence: object
    entropy: object
    annealed_objective: object = None


@dataclass(kw_only=True)
class AnnealingCounts:
    """The fields that close DA's and Potts DA's result dataclasses (keyword-only, after the variant's own).

    ``n_w_steps`` (the first included), ``n_temperatures``, ``converged`` (the
    entropy test passed or the path froze), ``inner_converged`` (every
    temperature ended on the KL rule) and ``mfn_converged`` (every l2-SVM-MFN
    solve met its stopping rule).
    """

    n_w_steps: int
    n_temperatures: int
    converged: bool = True
    inner_converged: bool = True
    mfn_converged: bool = True


class BestPoint:
    """The lowest-objective point seen along an annealing path: ``objective`` (``inf`` at first) and ``point``."""

    def __init__(self):
        self.objective = np.inf
        self.point = None

    def offer(self, objective, *point):
        """Keep a copy of ``point`` if it is the first one or its ``objective`` is lower than the best."""
        if self.point is None or objective < self.objective:
            self.objective = objective
            self.point = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in point)


@dataclass
class AnnealingPath:
    """What :func:`anneal` reports of the path: the final ``beliefs`` and the counts of :class:`AnnealingCounts`."""

    beliefs: np.ndarray
    n_w_steps: int
    n_temperatures: int
    converged: bool
    inner_converged: bool

    def result(self, result_class, best, mfn_converged, **extra):
        """The variant's ``result_class`` from the ``best`` point, these beliefs and counts, then ``extra``.

        DA's and Potts DA's result dataclasses start with the point (weights,
        bias, outputs), its objective and the beliefs, then the fields of
        :class:`AnnealingCounts` (``mfn_converged`` given here) and the variant's own.
        """
        return result_class(
            *best.point,
            best.objective,
            self.beliefs,
            n_w_steps=self.n_w_steps,
            n_temperatures=self.n_temperatures,
            converged=self.converged,
            inner_converged=self.inner_converged,
            mfn_converged=mfn_converged,
            **extra,
        )


def anneal(beliefs, steps, schedule, *, unlabeled_weight, best):
    """Deterministic annealing from ``beliefs``: a first w-step, then the temperature loop.

    Parameters
    ----------
    beliefs : ndarray
        The starting beliefs (the class fractions on every unlabeled row).
    steps : AnnealingSteps
        The variant's steps, divergence and entropy.
    schedule : AnnealingSchedule
        Tolerance, caps, ``verbose`` and the callback. The callback is
        called with a read-only :class:`~skssl.svm._callback.SolverEvent`:

        - ``"init"`` after the first w-step and ``"w"`` after every other
          one: ``temperature``, ``n_temperatures`` (temperatures begun, 0 at
          ``"init"``), ``inner`` (the alternation at this temperature, 0 at
          ``"init"``), ``beliefs``, ``objective`` (what the w-step returned)
          and ``annealed_objective`` (``J_T`` at the new point, or ``None``);
        - ``"p"`` after every p-step: ``temperature``, ``n_temperatures``,
          ``inner``, ``beliefs`` (the new ones), ``kl`` (their divergence from
          the previous ones) and ``annealed_objective`` (at the current point
          and the new beliefs, or ``None``).
    unlabeled_weight : float
        ``lam_u``; the first temperature is ``schedule.initial_temperature * lam_u``.
    best : BestPoint
        The best point so far, for ``verbose``.

    Returns
    -------
    path : AnnealingPath
    """
    callback = schedule.callback
    tol, max_inner_iter = schedule.tol, schedule.max_inner_iter

    def report(stage, n_temperatures, inner, T, **fields):
        J = None if steps.annealed_objective is None else steps.annealed_objective(beliefs, T)
        notify(
            callback, stage, temperature=T, n_temperatures=n_temperatures, inner=inner, beliefs=beliefs,
            annealed_objective=J, **fields,
        )  # fmt: skip

    T = schedule.initial_temperature * unlabeled_weight
    F = steps.w_step(beliefs, T, True, True)
    if callback is not None:
        report("init", 0, 0, T, objective=F)
    n_w_steps = 1
    H = steps.entropy(beliefs)
    n_temperatures = 0
    inner_ok = True
    frozen = False
    while n_temperatures < schedule.max_iter and H > tol and not frozen:
        n_temperatures += 1
        kl = 1.0
        inner = 0
        while inner < max_inner_iter and kl > tol:
            inner += 1
            previous = beliefs
            beliefs = steps.p_step(T)
            kl = steps.divergence(beliefs, previous)
            if callback is not None:
                report("p", n_temperatures, inner, T, kl=kl)
            F = steps.w_step(beliefs, T, False, kl <= tol or inner == max_inner_iter)
            if callback is not None:
                report("w", n_temperatures, inner, T, objective=F)
            n_w_steps += 1
        inner_ok &= kl <= tol
        # Frozen: a lower temperature left the beliefs unchanged, so the entropy left is what the class
        # fractions force (a row split between classes when a fraction of the rows is not a whole number).
        frozen = inner == 1 and kl <= tol
        H = steps.entropy(beliefs)
        if schedule.verbose:
            print(
                f"[{steps.name}] outer {n_temperatures}: T={T:.4g}, {inner} inner iteration(s), KL={kl:.3g} bits, "
                f"entropy={H:.3g} bits, objective {F:.6g} (best {best.objective:.6g})"
            )
        T /= DA_ANNEALING_RATE
    return AnnealingPath(beliefs, n_w_steps, n_temperatures, H <= tol or frozen, inner_ok)
