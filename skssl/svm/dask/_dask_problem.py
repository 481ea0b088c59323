"""One binary problem on a Dask cluster's row blocks: the blocks' states and the S3VM objective on them.

The client holds what is feature-length (weights) or scalar; every block's
rows and per-row state (outputs, costs, switched labels, beliefs, the Newton
system's active rows) stay on the worker that holds the block (the blocks of
:mod:`skssl.svm.dask._dask_rows`), in an immutable :class:`BlockState` that each
step replaces. The solvers' loops over these states are in
:mod:`skssl.svm.dask._dask_mfn`, :mod:`skssl.svm.dask._dask_tsvm` and
:mod:`skssl.svm.dask._dask_da`; their arithmetic is the in-memory solvers'
(:mod:`skssl.svm.solvers._mfn`, :mod:`skssl.svm.solvers._tsvm`, :mod:`skssl.svm.solvers._da`), with
sums over blocks in place of sums over rows, so a fit gives the in-memory
model up to the order of floating-point sums (and, for DA, up to the
tolerance of its belief threshold, which it finds by another iteration:
see :mod:`skssl.svm.dask._dask_da`).
"""

from dataclasses import dataclass, field, replace

import numpy as np

from ..solvers._mfn import penalty
from ..solvers._problem import ProblemTotals, S3VMProblem

__all__ = [
    "BlockState",
    "ProblemSpec",
    "new_states",
    "solve_norm",
]

_NO_W = np.empty(0)


# ----------------------------------------------------------------------------------------------------------
# Worker side: a block's state and the steps on it. A step never modifies the state it is given.


@dataclass(frozen=True)
class ProblemSpec:
    """What defines one binary problem on every block (sent to the workers once).

    The sorted ``classes`` and the index of the ``positive`` one, the
    ``class_weight`` of each class (or ``None``), whether the rows are
    ``weighted``, ``unlabeled_weight`` (0: the supervised problem) and the whole
    problem's ``totals``.
    """

    classes: np.ndarray
    positive: int
    class_weight: np.ndarray | None
    weighted: bool
    unlabeled_weight: float
    totals: ProblemTotals


@dataclass(frozen=True)
class BlockState:
    """A block's rows of one binary problem and their per-row state (on its worker).

    ``X`` holds the block's rows of positive weight (``keep``), or only the
    labeled ones for a supervised solve; the loss terms are ``targets`` and
    ``cost`` of the rows ``rows`` (``None``: one term per row); ``o`` the
    outputs. The other fields are the current Newton system, CGLS's row
    vectors, the Newton point's outputs, the line search's breakpoints, the
    temporary labels (TSVM) and the beliefs (DA).
    """

    X: object
    problem: S3VMProblem
    targets: np.ndarray
    cost: np.ndarray
    rows: np.ndarray | None
    o: np.ndarray
    keep: np.ndarray | None = None
    active: np.ndarray | None = None
    J: np.ndarray | None = None
    XJ: object = None
    cJ: np.ndarray | None = None
    tJ: np.ndarray | None = None
    oJ: np.ndarray | None = None
    z: np.ndarray | None = None
    q: np.ndarray | None = None
    o_bar: np.ndarray | None = None
    breaks: tuple | None = None
    g: np.ndarray | None = None
    p: np.ndarray | None = None
    reply: object = field(default=None, compare=False)


def _problem_rows(block, spec):
    """The rows of the problem on ``block``: (rows kept, +1/-1 targets, labeled mask, row weights or None)."""
    y, sw = block.y, block.sw
    labeled = y != -1
    weights = sw
    if spec.class_weight is not None:
        weights = sw.copy()
        codes = np.searchsorted(spec.classes, y[labeled])
        weights[labeled] = sw[labeled] * spec.class_weight[codes]
    keep = np.flatnonzero(weights > 0)
    target = np.where(y == spec.classes[spec.positive], 1.0, -1.0)
    if keep.size == y.size:
        keep = None
    take = (lambda a: a) if keep is None else (lambda a: a[keep])
    return keep, take(target), take(labeled), (take(weights) if spec.weighted else None)


def _state(block, spec, supervised):
    """The state of ``spec``'s problem on ``block`` at ``w = 0, b = 0``: all kept rows, or the labeled ones."""
    keep, target, labeled, weights = _problem_rows(block, spec)
    X = block.X if keep is None else block.X[keep]
    lam_u = 0.0 if supervised else spec.unlabeled_weight
    problem = S3VMProblem(target, labeled, alpha=0.0, unlabeled_weight=lam_u, sample_weight=weights, totals=spec.totals)
    if supervised:
        lab = problem.lab
        if lab.size != X.shape[0]:
            X = X[lab]
        return BlockState(X, problem, problem.y_lab, problem.lab_cost, None, np.zeros(lab.size), keep=keep)
    return BlockState(X, problem, target.copy(), np.zeros(X.shape[0]), None, np.zeros(X.shape[0]), keep=keep)


def _zero_outputs(s, b=0.0):
    return replace(s, o=np.full(s.X.shape[0], b), o_bar=None, reply=None)


def _set_outputs(s, w, b):
    return replace(s, o=s.X @ w + b, o_bar=None, reply=None)


def _s3vm_part(s, o=None):
    """The block's part of SVMlin's ``transductive_cost`` (without the penalty) at its outputs (or at ``o``)."""
    return s.problem.objective(_NO_W, 0.0, s.o if o is None else o)


# ----------------------------------------------------------------------------------------------------------
# Client side.


def new_states(rows, spec, supervised=False):
    """The states of ``spec``'s problem on every block, at ``w = 0, b = 0`` (made with the next round trip)."""
    return rows.submit(_state, rows.blocks, spec, supervised)


def solve_norm(rows, supervised=False):
    """The Frobenius norm of the rows that :func:`new_states`' solve sees (the labeled rows, or all kept ones).

    For CGLS's rounding floor (:data:`skssl.svm.solvers._mfn.CG_ROUNDING_FLOOR`), from
    the check round's sums over the rows of positive weight.
    """
    return float(np.sqrt(rows.sums("squares_labeled" if supervised else "squares_kept")))


def _sum(replies, k):
    total = replies[0][k]
    for r in replies[1:]:
        total = total + r[k]
    return total


def _half_penalty(alpha, w, b, alpha_b=None):
    return float(0.5 * penalty(w, b, alpha, alpha_b))


def s3vm_objective(rows, states, alpha, w, b, alpha_b=None):
    """SVMlin's ``transductive_cost`` of the problem at ``(w, b)``, the blocks' outputs being at that point."""
    return _half_penalty(alpha, w, b, alpha_b) + sum(rows.query(_s3vm_part, states))
