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

from .._callback import current_callback, notify
from ..kernels._rowblocks import RowSlicer, fit_threads
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
    "tsvm_loop",
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

    ``w``, ``b``, ``outputs`` (``X @ w + b``), the SVMlin ``objective``, the final
    +1 / -1 ``labels`` of all rows (temporary ones on unlabeled rows),
    ``n_switches`` (pairs switched), ``n_iter`` (l2-SVM-MFN solves),
    ``converged`` (``False`` when ``max_iter`` ended the fit) and
    ``mfn_converged`` (every solve met its stopping rule).
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
    """Swap up to ``max_switches`` pairs of the temporary labels at ``unlabeled`` in place; return the pairs swapped."""
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
    alpha_b=None,
    max_switches=10000,
    rel_tol=RELATIVE_STOP_EPS,
    max_iter=TSVM_MAX_ITER,
    max_newton_iter=MFNITERMAX,
    verbose=0,
    n_threads=1,
    sample_weight=None,
    callback=None,
    anneal_unlabeled_weight=True,
):
    """Transductive l2-SVM-MFN with multiple switching on one binary problem.

    Parameters
    ----------
    alpha_b : float, default=None
        Regularization of the bias; ``None`` takes ``alpha`` (SVMlin's).
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
        :mod:`skssl.svm.kernels._rowblocks`).
    sample_weight : ndarray of shape (n_rows,), default=None
        Positive row weights; they scale each row's loss and the labeled and
        unlabeled means become weighted means. ``None``: unit weights.
    callback : callable, default=None
        Receives the fit's events (see :mod:`skssl.svm._callback`; ``None``
        takes the installed one, if any): ``"switch"`` after every attempt to switch labels (the one that
        finds no pair and ends a switching round included):
        ``n_switched`` (pairs switched), ``unlabeled_weight`` (the current
        ``lam_u``) and ``n_solves`` (l2-SVM-MFN solves so far); and every
        l2-SVM-MFN solve's events (see :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`).
    anneal_unlabeled_weight : bool, default=True
        SVMlin's schedule: ``lam_u`` starts at ``TSVM_LAMBDA_SMALL`` and grows
        by ``TSVM_ANNEALING_RATE`` to ``unlabeled_weight``. ``False`` starts
        at ``unlabeled_weight`` (the safeguard's second TSVM candidate).

    Returns
    -------
    result : TSVMResult
    """
    problem = S3VMProblem(
        y, labeled, alpha=alpha, unlabeled_weight=unlabeled_weight, sample_weight=sample_weight, alpha_b=alpha_b
    )
    callback = current_callback(callback)
    with fit_threads(n_threads) as threads:
        kw = {
            "alpha": alpha,
            "alpha_b": problem.alpha_b,
            "tolerance": CGTolerance(),
            "rel_tol": rel_tol,
            "max_iter": max_newton_iter,
            "slicer": RowSlicer(),
            "callback": callback,
        }
        rows = _TSVMArrays(X, problem, kw, {"schedule": threads, "n_threads": n_threads})
        return tsvm_loop(
            rows,
            unlabeled_weight=unlabeled_weight,
            positive_fraction=positive_fraction,
            max_switches=max_switches,
            max_iter=max_iter,
            verbose=verbose,
            callback=callback,
            anneal_unlabeled_weight=anneal_unlabeled_weight,
        )


class _TSVMArrays:
    """TSVM's rows in memory: the rows interface of :func:`tsvm_loop` on ``X`` and arrays of labels and costs.

    ``kw`` holds the keyword arguments of every l2-SVM-MFN solve, ``par`` the
    threads of the solves on all rows.
    """

    def __init__(self, X, problem, kw, par):
        self.X, self.problem, self.kw, self.par = X, problem, kw, par
        self.n_unl = problem.n_unl
        self._labels = np.zeros(X.shape[0])
        self._labels[problem.lab] = problem.y_lab
        self.cost = None

    def solve_labeled(self):
        """The supervised l2-SVM on the labeled rows, from scratch."""
        lab = self.problem.lab
        return l2_svm_mfn(self.X[lab], self.problem.y_lab, self.problem.lab_cost, first=True, **self.kw)

    def supervised_result(self, res):
        """``(outputs, objective)`` of the supervised solution on all rows (no unlabeled row)."""
        outputs = self.X @ res.w + res.b
        return outputs, self.problem.objective(res.w, res.b, outputs)

    def start_labels(self, res, n_pos):
        """Label the ``n_pos`` unlabeled rows of the largest outputs positive, the others negative."""
        # All rows' outputs, then the unlabeled ones: X[unl] would copy ~all of X.
        unl = self.problem.unl
        ou = (self.X @ res.w + res.b)[unl]
        top = np.argsort(-ou, kind="stable")[:n_pos]
        yu = np.full(self.n_unl, -1.0)
        yu[top] = 1.0
        self._labels[unl] = yu

    def set_unlabeled_cost(self, lam):
        """Spread the total cost ``lam`` over the unlabeled rows."""
        if self.cost is None:
            self.cost = np.empty(self.X.shape[0])
            self.cost[self.problem.lab] = self.problem.lab_cost
        self.cost[self.problem.unl] = self.problem.unlabeled_cost(lam)

    def solve(self, res, first):
        """l2-SVM-MFN on all rows at the current labels and costs, from scratch or seeded by ``res``."""
        seed = {} if first else {"w": res.w, "b": res.b, "outputs": res.outputs}
        return l2_svm_mfn(self.X, self._labels, self.cost, first=first, **seed, **self.kw, **self.par)

    def switch(self, res, max_switches):
        """Switch up to ``max_switches`` pairs of temporary labels; returns the number switched."""
        return switch_labels(self._labels, res.outputs, self.problem.unl, max_switches)

    def full_outputs(self, res):
        """``res`` with its outputs on all rows (it may come from the labeled rows' solve)."""
        if res.outputs.shape[0] != self.X.shape[0]:
            return MFNResult(res.w, res.b, self.X @ res.w + res.b, res.objective, 0, 0, 0, res.converged)
        return res

    def objective(self, res):
        """SVMlin's ``transductive_cost`` at ``res``."""
        return self.problem.objective(res.w, res.b, res.outputs)

    def labels(self):
        """The labels of all rows (temporary ones on the unlabeled rows)."""
        return self._labels


def tsvm_loop(
    rows,
    *,
    unlabeled_weight,
    positive_fraction,
    max_switches,
    max_iter,
    verbose,
    callback,
    anneal_unlabeled_weight=True,
):
    """TSVM's loop (SVMlin's ``TSVM_MFN``) on ``rows``: the solves, the switches and the annealing of ``lam_u``.

    ``rows`` holds the data, the temporary labels and the costs, in memory
    (:class:`_TSVMArrays`) or on a cluster's blocks
    (:class:`~skssl.svm.dask._dask_tsvm.DaskTSVMRows`); both give ``n_unl``,
    ``solve_labeled()``, ``supervised_result(res)``, ``start_labels(res, n_pos)``,
    ``set_unlabeled_cost(lam)``, ``solve(res, first)``, ``switch(res, max_switches)``,
    ``full_outputs(res)``, ``objective(res)`` and ``labels()``. The other
    arguments are those of :func:`tsvm` (``callback`` resolved). Returns a
    :class:`TSVMResult`.
    """
    res = rows.solve_labeled()
    n_iter = 1
    mfn_ok = res.converged
    if rows.n_unl == 0:
        outputs, F = rows.supervised_result(res)
        return TSVMResult(res.w, res.b, outputs, F, rows.labels(), 0, n_iter, True, mfn_ok)
    rows.start_labels(res, n_positive(positive_fraction, rows.n_unl))
    lam0 = min(TSVM_LAMBDA_SMALL, unlabeled_weight) if anneal_unlabeled_weight else unlabeled_weight
    rows.set_unlabeled_cost(lam0)
    capped = n_iter >= max_iter
    if not capped:
        res = rows.solve(res, first=True)
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
            s = rows.switch(res, max_switches)
            if callback is not None:
                notify(callback, "switch", n_switched=s, unlabeled_weight=lam0, n_solves=n_iter)
            if s == 0:
                break
            rounds += 1
            n_switches += s
            res = rows.solve(res, first=False)
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
        rows.set_unlabeled_cost(lam0)
        res = rows.solve(res, first=False)
        n_iter += 1
        mfn_ok &= res.converged
    if capped:  # possibly before the first solve on all rows
        res = rows.full_outputs(res)
    F = rows.objective(res)
    return TSVMResult(res.w, res.b, res.outputs, F, rows.labels(), n_switches, n_iter, not capped, mfn_ok)
