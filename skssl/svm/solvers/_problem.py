"""The semi-supervised l2-SVM problem of one binary fit: its loss terms, their costs and its objective.

The supervised l2-SVM, TSVM, binary DA and every class of Potts DA solve
the same binary problem: labeled rows whose costs sum to 1, unlabeled rows
whose costs sum to ``unlabeled_weight`` (row weights normalized to mean 1),
and SVMlin's objective ``transductive_cost``. :class:`S3VMProblem` builds
those costs once and evaluates the objective; :class:`BeliefWStep` is the
l2-SVM-MFN solve at fixed beliefs that both annealing variants alternate
with their belief updates.
"""

from dataclasses import dataclass

import numpy as np

from ..kernels._kernels import dot
from ._mfn import EPSILON, MFNITERMAX, CGTolerance, l2_svm_mfn, mfn_objective, penalty

__all__ = ["BeliefWStep", "ProblemTotals", "S3VMProblem", "binary_solver_parameters", "transductive_cost"]

_PARAMETERS_HEADER = "    Parameters\n    ----------\n"

#: The numpydoc entries of the parameters that open every binary semi-supervised solver's signature.
_BINARY_SOLVER_PARAMETERS = """\
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data, not modified.
    y : ndarray of shape (n_rows,)
        +1 / -1 on labeled rows (other entries ignored).
    labeled : ndarray of bool of shape (n_rows,)
        Labeled rows.
    alpha : float
        ``lam``.
    unlabeled_weight : float
        ``lam_u``.
    positive_fraction : float
        ``r``.
"""


def binary_solver_parameters(solver):
    """Write the entries of ``X, y, labeled, alpha, unlabeled_weight, positive_fraction`` into ``solver``'s docstring.

    The binary solvers (TSVM, DA) open their signatures with these parameters,
    documented once here; they come first in the Parameters section. Returns
    ``solver``.
    """
    if solver.__doc__ is not None:  # None under python -OO
        solver.__doc__ = solver.__doc__.replace(_PARAMETERS_HEADER, _PARAMETERS_HEADER + _BINARY_SOLVER_PARAMETERS, 1)
    return solver


@dataclass(frozen=True)
class ProblemTotals:
    """A whole problem's counts ``n_lab``, ``n_unl`` and weight sums ``sw_lab_sum``, ``sw_unl_sum`` (``None``: unit)."""

    n_lab: int
    n_unl: int
    sw_lab_sum: float | None = None
    sw_unl_sum: float | None = None


class S3VMProblem:
    """The loss terms of one binary semi-supervised l2-SVM.

    The objective is SVMlin's ``transductive_cost``::

        F(w, b) = 1/2 (alpha |w|^2 + alpha_b b^2
                       + sum_labeled c_i max(0, 1 - y_i o_i)^2
                       + (lam_u / u) sum_unlabeled a_j max(0, 1 - |o_j|)^2),   o = X w + b,

    with labeled costs ``c_i = s_i / sum_labeled s`` (``1 / l`` for unit
    weights) and unlabeled weights ``a_j = u s_j / sum_unlabeled s`` of mean
    1 (1 for unit weights), ``s`` the row weights. A row of weight 2 is the
    row counted twice. SVMlin regularizes the bias like a weight,
    ``alpha_b = alpha``.

    Parameters
    ----------
    y : ndarray of shape (n_rows,)
        +1 / -1 on the labeled rows; other entries are ignored.
    labeled : ndarray of bool of shape (n_rows,)
        Labeled rows.
    alpha : float
        Regularization ``lam`` of the weights.
    unlabeled_weight : float
        ``lam_u``, the total cost of the unlabeled rows (0 for the
        supervised problem).
    sample_weight : ndarray of shape (n_rows,), default=None
        Positive row weights; ``None`` means unit weights.
    alpha_b : float, default=None
        Regularization of the bias; ``None`` takes ``alpha`` (SVMlin's).
    totals : ProblemTotals, default=None
        The counts and weight sums that normalize the costs, when these rows
        are one block of a larger problem (a Dask fit builds one problem per
        row block, normalized by the whole problem's totals); ``None``: the
        totals of these rows.

    Attributes
    ----------
    lab, unl : ndarray of int
        Indices of the labeled and of the unlabeled rows.
    n_lab, n_unl : int
        Their numbers.
    y_lab : ndarray of shape (n_lab,)
        Targets of the labeled rows.
    lab_cost : ndarray of shape (n_lab,)
        Costs ``c_i`` of the labeled rows (they sum to 1).
    unl_weight : ndarray of shape (n_unl,) or None
        Weights ``a_j`` of the unlabeled rows (mean 1); ``None`` for unit
        weights or without unlabeled rows.
    """

    def __init__(self, y, labeled, *, alpha, unlabeled_weight, sample_weight=None, totals=None, alpha_b=None):
        self.y = np.asarray(y, dtype=np.float64)
        self.labeled = np.asarray(labeled, dtype=bool)
        self.alpha = alpha
        self.alpha_b = alpha if alpha_b is None else alpha_b
        self.unlabeled_weight = unlabeled_weight
        self.sample_weight = sample_weight
        self.lab = np.flatnonzero(self.labeled)
        self.unl = np.flatnonzero(~self.labeled)
        self.n_lab, self.n_unl = self.lab.size, self.unl.size
        self.y_lab = self.y[self.lab]
        if sample_weight is not None:
            self._sw_lab = sample_weight[self.lab]
            self._sw_unl = sample_weight[self.unl]
        if totals is None:
            totals = ProblemTotals(self.n_lab, self.n_unl)
            if sample_weight is not None:
                totals = ProblemTotals(self.n_lab, self.n_unl, self._sw_lab.sum(), self._sw_unl.sum())
        self.totals = totals
        # The normalizers: this problem's own counts and sums, or the whole problem's for one block of it.
        self._n_lab_all, self._n_unl_all = totals.n_lab, totals.n_unl
        if sample_weight is None:
            self.lab_cost = np.full(self.n_lab, 1.0 / self._n_lab_all) if self.n_lab else np.empty(0)
            self.unl_weight = None
            return
        self._sw_lab_sum, self._sw_unl_sum = totals.sw_lab_sum, totals.sw_unl_sum
        self.lab_cost = self._sw_lab / self._sw_lab_sum
        self.unl_weight = self._sw_unl / self._sw_unl_sum * self._n_unl_all if self.n_unl else None

    def unlabeled_cost(self, lam=None):
        """Each unlabeled row's cost when their costs sum to ``lam`` (default ``unlabeled_weight``): ``lam a_j / u``."""
        lam = self.unlabeled_weight if lam is None else lam
        return lam / self._n_unl_all if self.unl_weight is None else lam * self.unl_weight / self._n_unl_all

    def objective(self, w, b, outputs):
        """SVMlin's ``transductive_cost`` ``F(w, b)``, given the outputs ``X @ w + b`` on every row of the problem."""
        o_lab = outputs[self.lab]
        s_lab = np.maximum(0.0, 1.0 - self.y_lab * o_lab)
        if self.sample_weight is None:
            F = penalty(w, b, self.alpha, self.alpha_b) + dot(s_lab, s_lab) / self._n_lab_all
            if self.n_unl:
                s_unl = np.maximum(0.0, 1.0 - np.abs(outputs[self.unl]))
                F += self.unlabeled_weight * dot(s_unl, s_unl) / self._n_unl_all
            return float(0.5 * F)
        F = penalty(w, b, self.alpha, self.alpha_b) + dot(self._sw_lab, s_lab * s_lab) / self._sw_lab_sum
        if self.n_unl and self._sw_unl_sum > 0:
            s_unl = np.maximum(0.0, 1.0 - np.abs(outputs[self.unl]))
            F += self.unlabeled_weight * dot(self._sw_unl, s_unl * s_unl) / self._sw_unl_sum
        return float(0.5 * F)

    def belief_terms(self):
        """The loss terms of the problem at beliefs (:class:`BeliefTerms`)."""
        return BeliefTerms(self)


class BeliefTerms:
    """The terms ``[labeled, unlabeled as +1, unlabeled as -1]`` of an l2-SVM at beliefs ``p``, for ``problem``.

    An unlabeled row believed positive with probability ``p_j`` enters the
    loss twice, with target +1 and cost ``lam_u a_j p_j / u`` and with target -1
    and cost ``lam_u a_j (1 - p_j) / u``; the terms share the row of ``X``, so
    ``X`` is never duplicated. ``rows``, ``targets`` and ``cost`` give each
    term's row, target and cost (the unlabeled part set by :meth:`set_beliefs`).
    """

    def __init__(self, problem):
        self.problem = problem
        n_lab, n_unl = problem.n_lab, problem.n_unl
        self.rows = np.concatenate([problem.lab, problem.unl, problem.unl])
        self.targets = np.concatenate([problem.y_lab, np.ones(n_unl), -np.ones(n_unl)])
        self.cost = np.empty(self.rows.size)
        self.cost[:n_lab] = problem.lab_cost
        self._unl_cost = problem.unlabeled_cost() if n_unl else 0.0

    def set_beliefs(self, p):
        """Set the unlabeled terms' costs for beliefs ``p`` (shape (n_unl,)); returns ``cost``."""
        n_lab, n_unl = self.problem.n_lab, self.problem.n_unl
        self.cost[n_lab : n_lab + n_unl] = self._unl_cost * p
        self.cost[n_lab + n_unl :] = self._unl_cost * (1.0 - p)
        return self.cost

    def objective(self, w, b, outputs):
        """The l2-SVM objective of the terms at their current costs (what l2-SVM-MFN minimizes)."""
        return mfn_objective(
            w, b, outputs, self.targets, self.cost, self.problem.alpha, self.rows, self.problem.alpha_b
        )


class BeliefWStep:
    """The w-step of deterministic annealing: l2-SVM-MFN on :class:`BeliefTerms`, seeded by the last solution.

    Successive solves of one fit share their CGLS tolerance and (if given)
    the buffer of the active rows. Without unlabeled rows a solve is the
    supervised l2-SVM on the labeled rows (then all rows of ``X``).

    Parameters
    ----------
    X : {csr sparse matrix, ndarray} of shape (n_rows, n_features)
        Float64 data, not modified.
    problem : S3VMProblem
        The binary problem.
    max_iter : int, default=MFNITERMAX
        Newton steps cap of each solve.
    n_threads : int, default=1
        Threads of the row-block products of :meth:`solve`.
    slicer : RowSlicer, default=None
        Storage of the active rows shared by the solves (``None``: each
        solve allocates its own, freed when it returns).
    callback : callable, default=None
        Given to every l2-SVM-MFN solve (see :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`).

    Attributes
    ----------
    w, b, outputs
        The last solution (the seed of the next solve); ``None``, 0 and
        ``None`` before the first.
    converged : bool
        Whether every exact solve met its stopping rule.
    """

    def __init__(self, X, problem, *, max_iter=MFNITERMAX, n_threads=1, slicer=None, callback=None):
        self.X = X
        self.problem = problem
        self.terms = problem.belief_terms()
        self.max_iter = max_iter
        self.n_threads = n_threads
        self.slicer = slicer
        self.callback = callback
        self.tolerance = CGTolerance()
        self.converged = True
        self.w, self.b, self.outputs = None, 0.0, None

    def solve(self, p, first, schedule=None, exact=True):
        """Solve the l2-SVM at beliefs ``p`` from the current point.

        Parameters
        ----------
        p : ndarray of shape (n_unl,)
            Beliefs of the unlabeled rows (ignored without them).
        first : bool
            A solve from scratch (see :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`).
        schedule : ThreadSchedule, default=None
            The fit's active thread schedule (:func:`~skssl.svm.kernels._rowblocks.fit_threads`);
            ``None`` computes the row-block products in this thread.
        exact : bool, default=True
            ``False`` takes one Newton step instead of iterating to the
            stopping rule (and does not count towards ``converged``).

        Returns
        -------
        result : MFNResult
        """
        newton_steps = self.max_iter if exact else 1
        threads = {"schedule": schedule, "n_threads": self.n_threads, "callback": self.callback}
        terms = self.terms
        if self.problem.n_unl == 0:
            res = l2_svm_mfn(
                self.X,
                terms.targets,
                terms.cost,
                alpha=self.problem.alpha,
                alpha_b=self.problem.alpha_b,
                tolerance=self.tolerance,
                max_iter=newton_steps,
                **threads,
            )
        else:
            res = l2_svm_mfn(
                self.X,
                terms.targets,
                terms.set_beliefs(p),
                alpha=self.problem.alpha,
                alpha_b=self.problem.alpha_b,
                rows=terms.rows,
                w=self.w,
                b=self.b,
                outputs=self.outputs,
                first=first,
                tolerance=self.tolerance,
                stop="absolute",
                abs_tol=EPSILON,
                max_iter=newton_steps,
                slicer=self.slicer,
                **threads,
            )
        self.w, self.b, self.outputs = res.w, res.b, res.outputs
        if exact:
            self.converged &= res.converged
        return res

    def set_point(self, w, b, outputs):
        """Move the seed of the next solve to ``w``, ``b`` and ``outputs = X @ w + b`` (e.g. an extrapolated point)."""
        self.w, self.b, self.outputs = w, float(b), outputs


def transductive_cost(w, b, outputs, y, labeled, alpha, unlabeled_weight, sample_weight=None, alpha_b=None):
    """SVMlin's ``transductive_cost`` of a binary linear model (:meth:`S3VMProblem.objective`).

    Parameters
    ----------
    w, b, outputs : ndarray, float, ndarray
        The model and its outputs ``X @ w + b`` on the training rows, as in :meth:`S3VMProblem.objective`.
    y : ndarray of shape (n_rows,)
        +1 / -1 on labeled rows; other entries are ignored.
    labeled : ndarray of bool of shape (n_rows,)
        Labeled rows.
    alpha : float
        Regularization ``lam``.
    unlabeled_weight : float
        ``lam_u``.
    sample_weight : ndarray of shape (n_rows,), default=None
        Row weights: the two means become weighted means (a weight of 2 is
        the row counted twice). ``None`` means unit weights.
    alpha_b : float, default=None
        Regularization of the bias; ``None`` takes ``alpha`` (SVMlin's).

    Returns
    -------
    F : float

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.solvers._problem import transductive_cost
    >>> transductive_cost(np.zeros(2), 0.0, np.zeros(3), np.array([1.0, -1.0, 0.0]),
    ...                   np.array([True, True, False]), 1e-3, 1.0)
    1.0
    """
    problem = S3VMProblem(
        y, labeled, alpha=alpha, unlabeled_weight=unlabeled_weight, sample_weight=sample_weight, alpha_b=alpha_b
    )
    return problem.objective(w, b, outputs)
