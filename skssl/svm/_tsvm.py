"""Transductive l2-SVM with multiple label switching (SVMlin's ``TSVM_MFN``).

The unlabeled rows carry temporary labels that meet a balance constraint;
pairs of labels are switched and the model retrained by l2-SVM-MFN while
the unlabeled cost is raised to ``unlabeled_weight``. The algorithm and the
implementation decisions are in the user guide, "Mathematical formulation
of the linear S3VMs": its section "TSVM with multiple switching" and the
TSVM part of "Implementation decisions".
"""

from dataclasses import dataclass

import numpy as np

from ._callback import current_callback, notify
from ._rowblocks import RowSlicer, thread_pool
from ._mfn import MFNITERMAX, RELATIVE_STOP_EPS, CGTolerance, MFNResult, l2_svm_mfn
from ._problem import S3VMProblem, binary_solver_parameters

__all__ = [
    "TSVM_ANNEALING_RATE",
    "TSVM_LAMBDA_SMALL",
    "TSVM_MAX_ITER",
    "TSVMResult",
    "n_positive",
    "switch_labels",
    "tsvm",
]

TSVM_LAMBDA_SMALL = 1e-5
TSVM_ANNEALING_RATE = 1.5
#: Default cap on l2-SVM-MFN solves (switching rounds + annealing levels);
#: SVMlin has none. With lam_u = 1 there are 30 annealing levels; rounds
#: are few with multiple switching and at most one per switched pair with S = 1.
TSVM_MAX_ITER = 10000


@dataclass
class TSVMResult:
    """Solution of one binary TSVM.

    Attributes
    ----------
    w, b : weights and bias.
    outputs : ndarray of shape (n_rows,)
        ``X @ w + b`` on the training rows.
    objective : float
        SVMlin's ``transductive_cost`` at ``(w, b)``.
    labels : ndarray of shape (n_rows,)
        Final +1 / -1 labels of all rows (temporary ones on unlabeled rows).
    n_switches : int
        Number of pairs switched.
    n_iter : int
        Number of l2-SVM-MFN solves.
    converged : bool
        False when ``max_iter`` solves ended the fit early.
    mfn_converged : bool
        Whether every l2-SVM-MFN solve met its stopping rule (rather than
        its Newton step cap).
    """

    w: np.ndarray
    b: float
    outputs: np.ndarray
    objective: float
    labels: np.ndarray
    n_switches: int
    n_iter: int
    converged: bool = True
    mfn_converged: bool = True


def n_positive(r, u):
    """Number of unlabeled rows labeled positive: ``floor(r u + 1/2)`` in ``[0, u]``."""
    return int(min(max(np.floor(r * u + 0.5), 0), u))


def switch_labels(labels, outputs, unlabeled, max_switches):
    """Swap up to ``max_switches`` pairs of temporary labels in place.

    Parameters
    ----------
    labels : ndarray of shape (n_rows,)
        +1 / -1 labels; the entries at ``unlabeled`` are modified in place.
    outputs : ndarray of shape (n_rows,)
        Current outputs.
    unlabeled : ndarray of int
        Indices of the unlabeled rows.
    max_switches : int
        ``S``, the cap on pairs swapped.

    Returns
    -------
    n_switched : int
        Number of pairs swapped.
    """
    yu = labels[unlabeled]
    ou = outputs[unlabeled]
    pos = np.flatnonzero((yu > 0) & (ou < 1.0))
    neg = np.flatnonzero((yu < 0) & (ou > -1.0))
    k = min(max_switches, pos.size, neg.size)
    if k == 0:
        return 0
    pos = _smallest(pos, ou[pos], k)
    neg = _smallest(neg, -ou[neg], k)
    ok = ou[pos] < ou[neg]
    n = k if ok.all() else int(np.argmin(ok))
    if n:
        labels[unlabeled[pos[:n]]] = -1.0
        labels[unlabeled[neg[:n]]] = 1.0
    return n


def _smallest(idx, keys, k):
    """The ``k`` entries of ``idx`` with the smallest keys, sorted (stable on ties)."""
    if k == 1:
        return idx[[int(np.argmin(keys))]]
    if k < idx.size // 4:
        # Partial selection first; the kth key is included with all its ties
        # so that the stable sort below sees every tied candidate.
        kth = np.partition(keys, k - 1)[k - 1]
        keep = keys <= kth
        idx, keys = idx[keep], keys[keep]
    order = np.argsort(keys, kind="stable")[:k]
    return idx[order]


@binary_solver_parameters
def tsvm(
    X,
    y,
    labeled,
    *,
    alpha,
    unlabeled_weight,
    positive_fraction,
    max_switches=10000,
    rel_tol=RELATIVE_STOP_EPS,
    max_iter=TSVM_MAX_ITER,
    max_newton_iter=MFNITERMAX,
    verbose=0,
    n_threads=1,
    sample_weight=None,
    callback=None,
):
    """Transductive l2-SVM-MFN with multiple switching on one binary problem.

    Parameters
    ----------
    max_switches : int, default=10000
        ``S``.
    rel_tol : float
        Relative stopping rule of each MFN solve.
    max_iter : int, default=TSVM_MAX_ITER
        Cap on the number of l2-SVM-MFN solves (the iterations of TSVM:
        switching rounds and annealing levels). Reaching it ends the fit
        early with ``converged=False``.
    max_newton_iter : int, default=MFNITERMAX
        Newton steps cap of each MFN solve.
    verbose : int
        Print progress when > 0.
    n_threads : int, default=1
        Threads for the products over row blocks (see
        :mod:`skssl.svm._rowblocks`).
    sample_weight : ndarray of shape (n_rows,), default=None
        Positive row weights; they scale each row's loss and the labeled and
        unlabeled means become weighted means. ``None``: unit weights.
    callback : callable, default=None
        Receives the fit's events (see :mod:`skssl.svm._callback`; ``None``
        takes the installed one, if any): ``"switch"`` after every attempt to switch labels (the one that
        finds no pair and ends a switching round included):
        ``n_switched`` (pairs switched), ``unlabeled_weight`` (the current
        ``lam_u``) and ``n_solves`` (l2-SVM-MFN solves so far); and every
        l2-SVM-MFN solve's events (see :func:`~skssl.svm._mfn.l2_svm_mfn`).

    Returns
    -------
    result : TSVMResult
    """
    problem = S3VMProblem(y, labeled, alpha=alpha, unlabeled_weight=unlabeled_weight, sample_weight=sample_weight)
    callback = current_callback(callback)
    with thread_pool(n_threads) as executor:
        lab, unl = problem.lab, problem.unl
        n_unl = problem.n_unl
        state = CGTolerance()
        kw = {
            "alpha": alpha,
            "tolerance": state,
            "rel_tol": rel_tol,
            "max_iter": max_newton_iter,
            "slicer": RowSlicer(),
            "callback": callback,
        }
        par = {"executor": executor, "n_threads": n_threads}
        y_lab = problem.y_lab
        res = l2_svm_mfn(X[lab], y_lab, problem.lab_cost, first=True, **kw)
        n_iter = 1
        mfn_ok = res.converged
        labels = np.zeros(X.shape[0])
        labels[lab] = y_lab
        if n_unl == 0:
            outputs = X @ res.w + res.b
            F = problem.objective(res.w, res.b, outputs)
            return TSVMResult(res.w, res.b, outputs, F, labels, 0, n_iter, True, mfn_ok)
        # All rows' outputs, then the unlabeled ones: X[unl] would copy ~all of X.
        ou = (X @ res.w + res.b)[unl]
        n_pos = n_positive(positive_fraction, n_unl)
        top = np.argsort(-ou, kind="stable")[:n_pos]
        yu = np.full(n_unl, -1.0)
        yu[top] = 1.0
        labels[unl] = yu
        lam0 = min(TSVM_LAMBDA_SMALL, unlabeled_weight)
        cost = np.empty(X.shape[0])
        cost[lab] = problem.lab_cost
        cost[unl] = problem.unlabeled_cost(lam0)
        capped = n_iter >= max_iter
        if not capped:
            res = l2_svm_mfn(X, labels, cost, first=True, **kw, **par)
            n_iter += 1
            mfn_ok &= res.converged
        n_switches = 0
        last_round = lam0 >= unlabeled_weight
        while not capped:
            rounds = 0
            while True:
                if n_iter >= max_iter:
                    capped = True
                    break
                s = switch_labels(labels, res.outputs, unl, max_switches)
                if callback is not None:
                    notify(callback, "switch", n_switched=s, unlabeled_weight=lam0, n_solves=n_iter)
                if s == 0:
                    break
                rounds += 1
                n_switches += s
                res = l2_svm_mfn(X, labels, cost, w=res.w, b=res.b, outputs=res.outputs, first=False, **kw, **par)
                n_iter += 1
                mfn_ok &= res.converged
            if verbose:
                print(
                    f"[TSVM] lam_0={lam0:.3g}: {rounds} switching round(s), "
                    f"{n_switches} switches so far, objective {res.objective:.6g}"
                )
            if last_round or capped:
                break
            if n_iter >= max_iter:
                capped = True
                break
            lam0 *= TSVM_ANNEALING_RATE
            if lam0 >= unlabeled_weight:
                lam0 = unlabeled_weight
                last_round = True
            cost[unl] = problem.unlabeled_cost(lam0)
            res = l2_svm_mfn(X, labels, cost, w=res.w, b=res.b, outputs=res.outputs, first=False, **kw, **par)
            n_iter += 1
            mfn_ok &= res.converged
        if capped and res.outputs.shape[0] != X.shape[0]:  # capped before the first solve on all rows
            res = MFNResult(res.w, res.b, X @ res.w + res.b, res.objective, 0, 0, 0, res.converged)
        F = problem.objective(res.w, res.b, res.outputs)
        return TSVMResult(res.w, res.b, res.outputs, F, labels, n_switches, n_iter, not capped, mfn_ok)
