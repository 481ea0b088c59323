"""sklearn's loop contract: max_iter caps what n_iter_ counts; a capped fit warns."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skssl.datasets import load_pcmac
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC


def _data(seed=0, n=120, d=30):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    w = rng.randn(d)
    y = (X @ w > 0).astype(int)
    y_semi = np.where(rng.rand(n) < 0.2, y, -1)
    return X, y_semi


@pytest.mark.parametrize(
    ("Est", "cap"),
    [
        (LinearL2SVC, 1),
        (TransductiveSVC, 1),
        (TransductiveSVC, 3),
        (DeterministicAnnealingSVC, 1),
        (DeterministicAnnealingSVC, 2),
    ],
)
def test_reaching_max_iter_warns_and_n_iter_is_capped(Est, cap):
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match=f"max_iter={cap}"):
        est = Est(alpha=1e-4, max_iter=cap).fit(X, y)
    assert est.n_iter_ == cap
    assert np.all(np.isfinite(est.coef_))


@pytest.mark.parametrize("Est", [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC])
@pytest.mark.parametrize("seed", range(3))
def test_n_iter_never_exceeds_max_iter(Est, seed):
    X, y = _data(seed)
    for cap in (2, 5, 9):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est = Est(alpha=1e-3, max_iter=cap).fit(X, y)
        assert 1 <= est.n_iter_ <= cap


def test_da_inner_cap_warns():
    X, y = _data(1)
    with pytest.warns(ConvergenceWarning, match="max_inner_iter=1"):
        DeterministicAnnealingSVC(alpha=1e-4, max_inner_iter=1).fit(X, y)


def test_converged_fits_do_not_warn():
    # pcmac, SVMlin's own example: every loop ends on its stopping rule.
    X, y, _, _ = load_pcmac(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        svmlin = {"alpha": 1e-3, "positive_fraction": 0.5, "safeguard": None}  # SVMlin's -W 0.001 -R 0.5
        tsvm = TransductiveSVC(**svmlin).fit(X, y)
        da = DeterministicAnnealingSVC(**svmlin).fit(X, y)
        sup = LinearL2SVC(alpha=1e-3).fit(X, y)
    assert sup.n_iter_ <= 50 and tsvm.n_iter_ < 10000 and da.n_iter_ < 30
    # SVMlin's reference objectives on this problem (DA: 0.123867, TSVM: 0.133878).
    assert da.objective_[0] == pytest.approx(0.123867, rel=1e-5)
    assert tsvm.objective_[0] == pytest.approx(0.133878, rel=1e-5)


@pytest.mark.parametrize("Est", [DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC])
@pytest.mark.parametrize("seed", range(5))
def test_annealing_frozen_by_a_fraction_that_no_hard_labeling_meets_ends_without_a_warning(Est, seed):
    # 41 unlabeled rows at positive_fraction 0.5: 20.5 positives, so one row keeps a belief of 1/2 at every
    # temperature and the mean entropy never reaches tol. The annealing must end when it freezes, not at max_iter.
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-2.0, 1.0, size=(22, 3)), rng.normal(2.0, 1.0, size=(23, 3))])
    y = np.full(45, -1)
    y[[0, 1, 22, 23]] = [0, 0, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = Est(alpha=0.05, positive_fraction=0.5, safeguard=None).fit(X, y)
    assert est.n_iter_ < 30
    beliefs = est.label_distributions_[y == -1, 1] if Est is PottsDeterministicAnnealingSVC else None
    if beliefs is not None:
        assert beliefs.sum() == pytest.approx(20.5, abs=1e-6)
        assert np.sum((beliefs > 1e-3) & (beliefs < 1 - 1e-3)) >= 1  # the split row is still there
