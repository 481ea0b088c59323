"""initial_temperature of the annealing estimators: the first temperature over unlabeled_weight (SVMlin's 10)."""

import numpy as np
import pytest

from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC
from skssl.svm._annealing import DA_INIT_TEMP
from skssl.svm._callback import solver_callback

ANNEALING = [DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _problem(seed, n_classes=2, n=70):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, size=(n_classes, 4))
    y = rng.integers(0, n_classes, n)
    X = centres[y] + rng.normal(size=(n, 4))
    y_semi = np.where(rng.random(n) < 0.25, y, -1)
    y_semi[:n_classes] = np.arange(n_classes)
    X[:n_classes] = centres
    return X, y_semi


def _first_temperature(estimator, X, y_semi):
    seen = []

    def record(event):
        if event.stage == "init":
            seen.append(event.temperature)

    with solver_callback(record):
        estimator.fit(X, y_semi)
    return seen


@pytest.mark.parametrize("Est", ANNEALING)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_annealing_path_starts_at_initial_temperature_times_unlabeled_weight(Est, n_classes):
    X, y_semi = _problem(n_classes, n_classes)
    default = Est(alpha=0.05, unlabeled_weight=0.5, safeguard=None)
    assert Est().initial_temperature == DA_INIT_TEMP == 10.0
    assert set(_first_temperature(default, X, y_semi)) == {10.0 * 0.5}
    explicit = Est(alpha=0.05, unlabeled_weight=0.5, initial_temperature=10.0, safeguard=None).fit(X, y_semi)
    np.testing.assert_array_equal(explicit.coef_, default.coef_)
    cold = Est(alpha=0.05, unlabeled_weight=0.5, initial_temperature=0.1, safeguard=None)
    assert set(_first_temperature(cold, X, y_semi)) == {0.05}
    # A cold start needs fewer temperatures than a hot one before the beliefs harden.
    hot_path = Est(alpha=0.05, unlabeled_weight=0.5, safeguard=None).fit(X, y_semi).n_iter_
    cold_path = cold.fit(X, y_semi).n_iter_
    assert cold_path < hot_path


@pytest.mark.parametrize("Est", ANNEALING)
@pytest.mark.parametrize("bad", [0.0, -1.0, "auto"])
def test_a_bad_initial_temperature_is_refused_by_name(Est, bad):
    X, y_semi = _problem(0)
    with pytest.raises(ValueError, match="initial_temperature"):
        Est(initial_temperature=bad).fit(X, y_semi)
