"""The annealing driver on toy steps: its temperatures, stopping tests and counts."""

import numpy as np

from skssl.svm.solvers._annealing import (
    DA_ANNEALING_RATE,
    DA_INIT_TEMP,
    AnnealingSchedule,
    AnnealingSteps,
    BestPoint,
    anneal,
)


def _run(p_step, tol=1e-6, max_iter=30, max_inner_iter=100):
    calls = []
    best = BestPoint()

    def w_step(p, T, first, last):
        calls.append((T, first, last))
        F = float(np.sum(p))
        best.offer(F, p)
        return F

    def divergence(p, q):
        return float(np.abs(p - q).max())

    def entropy(p):
        q = np.clip(p, 1e-300, 1.0)
        return float(-np.mean(q * np.log2(q) + (1 - q) * np.log2(np.clip(1 - q, 1e-300, 1.0))))

    steps = AnnealingSteps("toy", w_step, p_step, divergence, entropy)
    schedule = AnnealingSchedule(tol, max_iter, max_inner_iter)
    path = anneal(np.full(3, 0.5), steps, schedule, unlabeled_weight=2.0, best=best)
    return path, calls, best


def test_unchanged_beliefs_freeze_at_the_first_temperature():
    path, calls, best = _run(lambda T: np.full(3, 0.5))
    assert calls == [(DA_INIT_TEMP * 2.0, True, True), (DA_INIT_TEMP * 2.0, False, True)]
    assert (path.n_temperatures, path.n_w_steps, path.converged, path.inner_converged) == (1, 2, True, True)
    assert best.objective == 1.5


def test_hard_beliefs_end_the_annealing_on_the_entropy():
    path, calls, best = _run(lambda T: np.array([1.0, 0.0, 0.0]))
    # The first alternation moves the beliefs, the second leaves them: one temperature, then zero entropy.
    assert path.n_temperatures == 1 and path.converged
    assert [T for T, first, _ in calls if not first] == [20.0, 20.0]
    np.testing.assert_array_equal(best.point[0], [1.0, 0.0, 0.0])


def test_caps_and_temperature_schedule():
    rng = np.random.default_rng(0)
    path, calls, _ = _run(lambda T: rng.uniform(0.2, 0.8, 3), max_iter=4, max_inner_iter=3)
    assert path.n_temperatures == 4 and not path.converged and not path.inner_converged
    temperatures = sorted({T for T, first, _ in calls if not first}, reverse=True)
    np.testing.assert_allclose(temperatures, 20.0 / DA_ANNEALING_RATE ** np.arange(4))
    # Each temperature's last alternation (the cap) is flagged.
    assert [last for _, first, last in calls if not first] == [False, False, True] * 4


def test_best_point_keeps_the_first_offer_and_strict_improvements():
    best = BestPoint()
    w = np.zeros(2)
    best.offer(np.nan, w, 1.0)
    assert best.point is not None and np.isnan(best.objective)
    best = BestPoint()
    best.offer(2.0, w, 1.0)
    w[0] = 5.0  # the caller's array may change: the kept point is a copy
    best.offer(2.0, w, 3.0)  # not lower: not kept
    assert best.point[1] == 1.0 and best.point[0][0] == 0.0
    best.offer(1.0, w, 3.0)
    assert best.objective == 1.0 and best.point[0][0] == 5.0
