"""Every valid alpha gives a finite model or a ValueError, in bounded work.

``alpha`` below float64's machine epsilon is refused (see the decisions of
:mod:`skssl.svm._base`); above it the fitted model must be finite. The
work of a fit is counted (CGLS iterations, dual evaluations of the p-steps)
rather than timed.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from skssl.svm import (
    DeterministicAnnealingSVC,
    LinearL2SVC,
    PottsDeterministicAnnealingSVC,
    TransductiveSVC,
)
from skssl.svm import _classes
from skssl.svm.solvers import _da, _mfn, _potts_beliefs
from skssl.svm._base import ALPHA_MIN
from skssl.svm.solvers._mfn import MFNResult

ESTIMATORS = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]
TOO_SMALL = "too small for float64"


class WorkBudget:
    """Counts the CGLS iterations and p-step evaluations of a fit; fails once ``limit`` is passed."""

    def __init__(self, monkeypatch, limit):
        self.limit = limit
        self.cgls = 0
        self.dual = 0
        cgls, evaluate, sums = _mfn.cgls, _potts_beliefs._DualRows.evaluate, _da.MemoryBeliefSums.__call__

        def counted_cgls(*args):
            out = cgls(*args)
            self.cgls += out[2]
            self._check()
            return out

        def counted_evaluate(rows, nu):
            self.dual += 1
            self._check()
            return evaluate(rows, nu)

        def counted_sums(belief_sums, xs):
            self.dual += len(xs)  # one evaluation per threshold of the round
            self._check()
            return sums(belief_sums, xs)

        monkeypatch.setattr(_mfn, "cgls", counted_cgls)
        monkeypatch.setattr(_potts_beliefs._DualRows, "evaluate", counted_evaluate)
        monkeypatch.setattr(_da.MemoryBeliefSums, "__call__", counted_sums)

    def _check(self):
        if self.cgls + self.dual > self.limit:
            raise AssertionError(f"the fit passed its work budget of {self.limit} (cgls {self.cgls}, dual {self.dual})")


def _problem(seed):
    rng = np.random.default_rng(seed)
    n, d = 12, int(rng.integers(1, 6))
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.7)
    y = np.full(n, -1)
    y[:6] = [0, 1, 2, 0, 1, 2] if seed % 2 else [0, 1, 0, 1, 0, 1]
    return X, y


#: The budget bounds one solve: the safeguard (three solves and two supervised ones) is off here.
_SOLVER_ONLY = {Est: ({} if Est is LinearL2SVC else {"safeguard": None}) for Est in ESTIMATORS}

ALPHAS = [1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-16, ALPHA_MIN, 1e-12, 1e-4, 1e4, 1e12]


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_any_alpha_gives_a_finite_model_or_a_value_error_in_bounded_work(Est, monkeypatch):
    budget = WorkBudget(monkeypatch, limit=20_000)
    for seed in range(2):
        X, y = _problem(seed)
        for X_in in (X, sp.csr_matrix(X)):
            for alpha in ALPHAS:
                budget.cgls = budget.dual = 0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    try:
                        est = Est(alpha=alpha, max_iter=30, **_SOLVER_ONLY[Est]).fit(X_in, y)
                    except ValueError as error:
                        assert alpha < 1e-12, f"alpha={alpha}: {error}"
                        assert TOO_SMALL in str(error)
                        continue
                assert alpha >= ALPHA_MIN
                for value in (est.coef_, est.intercept_, est.objective_, est.decision_function(X_in)):
                    assert np.all(np.isfinite(value)), f"alpha={alpha}"
                if Est is PottsDeterministicAnnealingSVC:
                    assert np.all(np.isfinite(est.label_distributions_))
                if Est in (DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC):
                    assert est.n_iter_ <= 30


def test_alpha_below_machine_epsilon_is_refused_and_epsilon_is_accepted():
    X, y = _problem(0)
    for Est in ESTIMATORS:
        with pytest.raises(ValueError, match="alpha_=1e-16 is too small for float64"):
            Est(alpha=1e-16).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert np.all(np.isfinite(Est(alpha=ALPHA_MIN).fit(X, y).coef_))


def test_tsvm_at_tiny_alpha_raises_instead_of_returning_nan():
    # A CSR column of 20 rows, 2 labeled: at alpha=1e-200 the compiled CGLS
    # returned coef_ = [nan] and objective_ = [nan]; dense input gave 1e227
    # and an infinite objective at alpha=1e-250.
    rng = np.random.default_rng(112)
    X = rng.standard_normal((20, 1)) * (rng.random((20, 1)) < 0.6)
    y = np.full(20, -1)
    y[:2] = [0, 1]
    for alpha in (1e-200, 1e-250):
        for X_in in (sp.csr_matrix(X), X):
            with pytest.raises(ValueError, match=TOO_SMALL):
                TransductiveSVC(alpha=alpha).fit(X_in, y)


def test_linear_l2svc_at_tiny_alpha_raises_instead_of_returning_an_infinite_objective():
    # Dense, 3 classes: at alpha=1e-300 class 0's weights reached 2e281 and its objective inf.
    rng = np.random.default_rng(366)
    n, d = int(rng.integers(4, 30)), int(rng.integers(1, 8))
    X = rng.standard_normal((n, d))
    y = np.arange(n) % 3
    with pytest.raises(ValueError, match=TOO_SMALL):
        LinearL2SVC(alpha=1e-300).fit(X, y)


def test_potts_at_tiny_alpha_ends_in_bounded_work(monkeypatch):
    # 8 rows x 5 features: at alpha=1e-100 every CGLS ran to its cap of 10,000
    # iterations and the p-steps' continuation to 200 Newton steps per level.
    budget = WorkBudget(monkeypatch, limit=20_000)
    X = np.random.default_rng(0).standard_normal((8, 5))
    y = np.array([0, 1, 2, -1, -1, -1, -1, -1])
    for alpha in (1e-100, 1e-300):
        with pytest.raises(ValueError, match=TOO_SMALL):
            PottsDeterministicAnnealingSVC(alpha=alpha).fit(X, y)
    assert budget.cgls + budget.dual <= 20_000


def test_p_step_continuation_skips_unresolvable_temperatures(monkeypatch):
    # Energies of a model fitted at alpha=1e-100, spread over 1.6e57, at T = 0.88:
    # the continuation visited 58 levels, 60 Newton runs and 226,665 dual evaluations.
    E = np.array(
        [
            [1.2904030102941828e00, 5.6704431740260919e-01, 8.1805022597022545e26],
            [3.7652138773409782e00, -1.9010767664317805e00, 1.5648482404191415e57],
            [-1.9077603643851724e00, 1.6174238645581980e00, 5.4725213571235675e32],
            [1.0572178089112405e-01, -1.0882225545486758e26, -7.7500260519024148e28],
            [1.8441156471852356e00, 1.3734734853975397e00, -4.0084461072539131e28],
        ]
    )
    nu = np.array([0.0, -0.16702273470405848, -0.9771688130276353])
    runs = []
    newton = _potts_beliefs._newton
    monkeypatch.setattr(_potts_beliefs, "_newton", lambda E, T, *a, **k: runs.append(T) or newton(E, T, *a, **k))
    budget = WorkBudget(monkeypatch, limit=10**6)
    with pytest.warns(ConvergenceWarning, match="did not meet the class fractions"):
        P, _ = _potts_beliefs.potts_p_step(E, 0.877914951989026, np.full(3, 1 / 3), nu)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    # The first attempt, at most 17 levels at or above eps * spread, and T itself.
    spread = np.ptp(E - E.min(axis=1, keepdims=True))
    assert len(runs) <= 19
    assert all(T >= np.finfo(float).eps * spread for T in runs[1:-1])
    assert runs[-1] == 0.877914951989026
    assert budget.dual < 40_000


@pytest.mark.parametrize("T", [1e-9, 0.3, 7.0, 1e200])
@pytest.mark.parametrize("spread", [0.0, 1.0, 55.0, 1e6, 1e15])
def test_p_step_continuation_is_unchanged_when_energies_are_resolved(T, spread):
    # spread / T below 1 / eps: every decade from T up to the spread, as before the levels were bounded.
    spread = spread * T
    temps = [T]
    while temps[-1] < max(spread, T):
        temps.append(10.0 * temps[-1])
    assert _potts_beliefs._continuation_temperatures(T, spread) == temps


def test_p_step_continuation_visits_at_most_17_levels():
    for T, spread in [(1.0, 1e57), (1e-300, 1e300), (0.88, 1.6e57), (1e-3, 1e17)]:
        temps = _potts_beliefs._continuation_temperatures(T, spread)
        assert temps[0] == T and len(temps) <= 18
        assert all(t >= np.finfo(float).eps * spread for t in temps[1:])
        assert temps[-1] >= spread


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_non_finite_solver_results_are_not_stored(Est, monkeypatch):
    X, y = _problem(1)
    if Est is LinearL2SVC:

        def broken(X, y, cost, **kw):
            w = np.full(X.shape[1], np.nan)
            return MFNResult(w, 0.0, np.full(X.shape[0], np.nan), np.nan, 1, 1, 0, True)

        monkeypatch.setattr(_classes, "l2_svm_mfn", broken)
    elif Est is TransductiveSVC:

        def broken(*args, **kw):
            raise FloatingPointError("l2-SVM-MFN produced non-finite weights (overflow in CGLS).")

        monkeypatch.setattr(_classes, "tsvm", broken)
    elif Est is DeterministicAnnealingSVC:
        solver = _classes.deterministic_annealing

        def broken(*args, **kw):
            res = solver(*args, **kw)
            res.p = np.full_like(res.p, np.nan)  # non-finite beliefs only
            return res

        monkeypatch.setattr(_classes, "deterministic_annealing", broken)
    else:
        solver = _classes.potts_annealing

        def broken(*args, **kw):
            res = solver(*args, **kw)
            res.objective = np.inf
            return res

        monkeypatch.setattr(_classes, "potts_annealing", broken)
    est = Est(alpha=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(ValueError, match=TOO_SMALL):
            est.fit(X, y)
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("scaling", [1e-200, 1e-170, 1e170, 1e200])
def test_an_intercept_scaling_whose_bias_penalty_float64_cannot_hold_is_refused(Est, scaling):
    # alpha / intercept_scaling**2 raised ZeroDivisionError or OverflowError from Python's float arithmetic.
    rng = np.random.RandomState(0)
    X = rng.randn(40, 2)
    y = np.where(rng.rand(40) < 0.5, (X[:, 0] > 0).astype(int), -1)
    y[:2] = [0, 1]
    with pytest.raises(ValueError, match="outside float64's range"):
        Est(intercept_scaling=scaling).fit(X, y)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_a_large_intercept_scaling_that_float64_can_hold_is_fitted(Est):
    # The counterpart of the refusals above, on their problem: large but representable, so fitted.
    rng = np.random.RandomState(0)
    X = rng.randn(40, 2)
    y = np.where(rng.rand(40) < 0.5, (X[:, 0] > 0).astype(int), -1)
    y[:2] = [0, 1]
    Est(intercept_scaling=1e3).fit(X, y)


def test_an_overflowing_fit_names_unlabeled_weight_beside_alpha():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 2)
    y = (X[:, 0] > 0).astype(int)
    y[20:] = -1
    with pytest.raises(ValueError, match=r"too small for float64 .*, or unlabeled_weight=1e\+300 too large against it"):
        TransductiveSVC(unlabeled_weight=1e300).fit(X, y)
