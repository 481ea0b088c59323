"""A new one-vs-rest S3VM variant written by following CONTRIBUTING.md ("Adding a linear S3VM variant").

The variant, defined here and nowhere else, labels the unlabeled rows once with
the supervised l2-SVM and then solves the l2-SVM with those labels fixed (one
round of self-training). It is one class with ``_parameter_constraints``,
``__init__``, ``_solve`` and, for Dask arrays, ``_solve_dask`` (the same two
solves with the block solvers of ``skssl.svm.dask``); everything else comes from
the base class, and its ``class_weight`` text is the family's shared block
(``skssl.svm._docs``). It fits in memory and on a Dask cluster to the same
model, and a variant without one of the hooks fails at ``fit`` with a sentence
naming it. If the base class's contract changes, these tests say so.
"""

import logging
import warnings

from dataclasses import replace
from numbers import Real

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.utils._param_validation import Interval
from sklearn.utils.estimator_checks import parametrize_with_checks

from skssl.svm import LinearL2SVC, TransductiveSVC
from skssl.svm._base import _BaseLinearSVC
from skssl.svm._docs import fill_doc
from skssl.svm.dask._dask_mfn import dask_mfn
from skssl.svm.dask._dask_problem import new_states, s3vm_objective, solve_norm
from skssl.svm.solvers._mfn import l2_svm_mfn
from skssl.svm.solvers._problem import S3VMProblem
from skssl.svm.kernels._rowblocks import fit_threads
from skssl.utils.estimator_checks import parametrize_with_semi_supervised_checks


@fill_doc
class OneRoundSelfLabeledSVC(_BaseLinearSVC):
    """l2-SVM that labels the unlabeled rows once with the supervised l2-SVM, then refits with them.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization of the weights.
    %(intercept_scaling)s
    unlabeled_weight : float, default=1.0
        Total cost of the unlabeled rows in the refit.
    tol : float, default=1e-6
        Relative stopping tolerance of the l2-SVM-MFN solves.
    max_iter : int, default=50
        Newton steps of each solve.
    %(class_weight)s
    n_jobs : int, default=None
        Threads.
    verbose : int, default=0
        Unused.
    """

    _parameter_constraints: dict = {
        **_BaseLinearSVC._parameter_constraints,
        "unlabeled_weight": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        alpha="auto",
        *,
        intercept_scaling="auto",
        unlabeled_weight=1.0,
        tol=1e-6,
        max_iter=50,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.intercept_scaling = intercept_scaling
        self.unlabeled_weight = unlabeled_weight
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        problem = S3VMProblem(
            y,
            labeled,
            alpha=self.alpha_,
            alpha_b=self._alpha_b,
            unlabeled_weight=self.unlabeled_weight,
            sample_weight=sample_weight,
        )
        options = {
            "alpha": self.alpha_,
            "alpha_b": self._alpha_b,
            "rel_tol": self.tol,
            "max_iter": self.max_iter,
            "n_threads": n_threads,
        }
        with fit_threads(n_threads) as threads:
            supervised = l2_svm_mfn(X[problem.lab], problem.y_lab, problem.lab_cost, schedule=threads, **options)
            if problem.n_unl == 0:
                res = supervised
            else:
                targets = problem.y.copy()
                targets[problem.unl] = np.where(X[problem.unl] @ supervised.w + supervised.b >= 0, 1.0, -1.0)
                cost = np.empty(targets.shape[0])
                cost[problem.lab] = problem.lab_cost
                cost[problem.unl] = problem.unlabeled_cost()
                res = l2_svm_mfn(X, targets, cost, schedule=threads, **options)
        outputs = X @ res.w + res.b
        return replace(res, outputs=outputs, objective=problem.objective(res.w, res.b, outputs))

    def _solve_dask(self, rows, spec, positive_fraction):
        options = {"alpha": self.alpha_, "alpha_b": self._alpha_b, "rel_tol": self.tol, "max_iter": self.max_iter}
        supervised = dask_mfn(
            rows, new_states(rows, spec, supervised=True), x_norm=solve_norm(rows, supervised=True), **options
        )
        if spec.totals.n_unl == 0:
            return supervised
        # On each block's worker: the unlabeled rows take the supervised model's labels and their costs.
        states = rows.submit(_self_labeled, new_states(rows, spec), supervised.w, supervised.b)
        res = dask_mfn(rows, states, x_norm=solve_norm(rows), **options)
        return replace(res, objective=s3vm_objective(rows, res.outputs, self.alpha_, res.w, res.b, self._alpha_b))


def _self_labeled(state, w, b):
    """A block's state with its unlabeled rows labeled by ``(w, b)`` and costed as in ``_solve``."""
    problem = state.problem
    targets = state.targets.copy()
    targets[problem.unl] = np.where(state.X[problem.unl] @ w + b >= 0, 1.0, -1.0)
    cost = np.empty(targets.shape[0])
    cost[problem.lab] = problem.lab_cost
    cost[problem.unl] = problem.unlabeled_cost()
    return replace(state, targets=targets, cost=cost, reply=None)


# The family's expected failures, whose reasons tests/test_common.py gives for the exported estimators.
_SAME_AS_THE_FAMILY = "expected to fail for every linear S3VM; reason in tests/test_common.py (_LINEAR_EXPECTED)"
_EXPECTED = {
    name: _SAME_AS_THE_FAMILY
    for name in (
        "check_class_weight_classifiers",
        "check_class_weight_balanced_linear_classifier",
        "check_classifiers_classes",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


@parametrize_with_checks([OneRoundSelfLabeledSVC()], expected_failed_checks=lambda est: _EXPECTED)
def test_the_variant_passes_sklearns_checks(estimator, check):
    check(estimator)


@parametrize_with_semi_supervised_checks([OneRoundSelfLabeledSVC()])
def test_the_variant_passes_skssls_semi_supervised_checks(estimator, check):
    check(estimator)


def _problem(seed, n=60, d=4, n_labeled=12):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.where(X[:, 0] + 0.3 * rng.randn(n) > 0, 1, 0)
    y_semi = np.full(n, -1)
    y_semi[:n_labeled] = y[:n_labeled]
    y_semi[0], y_semi[1] = 0, 1
    return X, y, y_semi


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("sparse", [False, True])
def test_the_variant_reaches_the_optimum_of_its_fixed_label_problem(seed, sparse):
    """The refit minimizes the fixed-label objective: scipy.optimize on the same costs finds the same point."""
    X, _, y_semi = _problem(seed)
    clf = OneRoundSelfLabeledSVC(alpha=0.05, unlabeled_weight=0.5, tol=1e-12).fit(
        sp.csr_matrix(X) if sparse else X, y_semi
    )
    labeled = y_semi != -1
    # the unlabeled rows' fixed labels are the supervised l2-SVM's
    supervised = LinearL2SVC(alpha=0.05, tol=1e-12).fit(X, y_semi).decision_function(X)
    t = np.where(labeled, np.where(y_semi == 1, 1.0, -1.0), np.where(supervised >= 0, 1.0, -1.0))
    cost = np.where(labeled, 1.0 / labeled.sum(), 0.5 / (~labeled).sum())

    def objective(v):
        o = X @ v[:-1] + v[-1]
        slack = np.maximum(0.0, 1.0 - t * o)
        return 0.5 * (0.05 * v @ v + cost @ slack**2)

    found = minimize(objective, np.zeros(X.shape[1] + 1), method="BFGS", options={"gtol": 1e-12}).x
    ours = np.r_[clf.coef_.ravel(), clf.intercept_]
    assert objective(ours) <= objective(found) + 1e-12
    np.testing.assert_allclose(ours, found, atol=1e-5)


def test_the_variant_reports_the_families_objective_and_differs_from_tsvm():
    X, _, y_semi = _problem(0, n=200, n_labeled=20)
    clf = OneRoundSelfLabeledSVC(alpha=0.05).fit(X, y_semi)
    outputs = clf.decision_function(X)
    t = np.where(y_semi == 1, 1.0, -1.0)
    expected = S3VMProblem(t, y_semi != -1, alpha=0.05, unlabeled_weight=1.0).objective(
        clf.coef_.ravel(), clf.intercept_[0], outputs
    )
    assert clf.objective_[0] == pytest.approx(expected, rel=1e-12)
    tsvm = TransductiveSVC(alpha=0.05, safeguard=None).fit(X, y_semi)
    assert not np.allclose(clf.coef_, tsvm.coef_)
    # three classes go through the one-vs-rest machinery of the base class
    y3 = np.where(X[:, 1] > 0.8, 2, y_semi.clip(min=0))
    y3[20:] = -1
    clf3 = OneRoundSelfLabeledSVC(alpha=0.05).fit(X, y3)
    assert clf3.coef_.shape == (3, X.shape[1]) and set(clf3.predict(X)) <= {0, 1, 2}


def test_the_variant_documents_class_weight_with_the_familys_block():
    doc = OneRoundSelfLabeledSVC.__doc__
    assert "%(" not in doc
    assert doc.count('class_weight : dict, "balanced" or None') == 1
    assert "    class_weight : dict" in doc and "        Weights of the classes of the labeled rows" in doc


class _WithoutSolve(_BaseLinearSVC):
    def __init__(self, alpha="auto", *, intercept_scaling="auto", tol=1e-6, max_iter=50, n_jobs=None, verbose=0):
        self.alpha = alpha
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.verbose = verbose


def test_a_variant_without_its_solve_fails_at_fit_with_a_sentence():
    X, _, y_semi = _problem(0)
    with pytest.raises(NotImplementedError, match=r"_WithoutSolve gives no _solve\(X, y, labeled"):
        _WithoutSolve().fit(X, y_semi)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # port-in-use and similar start-up chatter
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=logging.ERROR
        )
    with cluster, distributed.Client(cluster) as client:
        yield client


def _on_dask(X, y_semi):
    da = pytest.importorskip("dask.array")
    chunks = (X.shape[0] // 2, X.shape[0] - X.shape[0] // 2)
    return da.from_array(X, chunks=(chunks, (X.shape[1],)), asarray=False), da.from_array(y_semi, chunks=(chunks,))


@pytest.mark.filterwarnings("ignore:.*k-means clusters of all rows:UserWarning")  # the fractions: unused here
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_variant_fits_on_dask_to_its_in_memory_model(client, n_classes):
    """The variant as written above, on a Dask array: the in-memory model, its objective included."""
    X, _, y_semi = _problem(0, n=120, n_labeled=24)
    if n_classes == 3:
        y_semi = np.where(y_semi == -1, -1, y_semi + (X[:, 1] > 0.8))
    in_memory = OneRoundSelfLabeledSVC(alpha=0.05).fit(X, y_semi)
    on_dask = OneRoundSelfLabeledSVC(alpha=0.05).fit(*_on_dask(X, y_semi))
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(on_dask.objective_, in_memory.objective_, rtol=1e-9)
    np.testing.assert_array_equal(on_dask.transduction_.compute(), in_memory.transduction_)


class _InMemoryOnly(OneRoundSelfLabeledSVC):
    _solve_dask = _BaseLinearSVC._solve_dask


def test_a_variant_without_a_dask_solve_says_so_on_a_dask_array(client):
    X, _, y_semi = _problem(0)
    with pytest.raises(
        NotImplementedError, match=r"_InMemoryOnly does not fit on Dask arrays: it gives no _solve_dask"
    ):
        _InMemoryOnly().fit(*_on_dask(X, y_semi))
