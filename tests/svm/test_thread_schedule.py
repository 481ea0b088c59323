"""The number of OpenMP threads is a run-time choice that never changes a result (ThreadSchedule)."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.kernels import _kernels, _rowblocks
from skssl.svm.kernels._rowblocks import fit_threads


ThreadSchedule = _kernels.ThreadSchedule


def _random_rows(rng):
    n, d = rng.randint(2, 150), rng.randint(1, 60)
    X = sp.random(n, d, density=rng.uniform(0.02, 0.6), format="csr", random_state=rng)
    X.data = rng.randn(X.nnz) * 10.0 ** rng.randint(-2, 3)
    index_dtype = [np.int32, np.int64][rng.randint(2)]
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    n_blocks = rng.randint(2, min(n, 6) + 1)
    cuts = np.sort(rng.choice(np.arange(1, n), n_blocks - 1, replace=False))
    bounds = np.concatenate([[0], cuts, [n]]).astype(np.intp)
    return X, bounds


def _cgls(X, bounds, rng_seed, n_threads, max_iter=None):
    rng = np.random.RandomState(rng_seed)
    n, d = X.shape
    cost = rng.exponential(size=n) * (rng.rand(n) < 0.8)
    target = np.sign(rng.randn(n))
    w = rng.randn(d) * 0.1
    outputs = X @ w + 0.2
    it_cap = rng.randint(1, 30) if max_iter is None else max_iter
    b, converged, n_iter = _kernels.csr_cgls(
        X.data, X.indices, X.indptr, bounds, cost, target, outputs, w, 0.2, 1e-2, 1e-2, 1e-12, it_cap, n_threads
    )
    return w, outputs, b, converged, n_iter


def _assert_same(a, b):
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_the_same_blocks_on_fewer_threads_give_bitwise_the_same_result():
    # The invariant the schedule relies on, over random matrices and block splits: every kernel gives the same
    # bits whether its blocks run on one thread each, on one thread in all, or on a count that changes from one
    # iteration (or call) to the next.
    for seed in range(25):
        rng = np.random.RandomState(seed)
        X, bounds = _random_rows(rng)
        n_blocks = len(bounds) - 1
        ref = _cgls(X, bounds, seed, n_blocks)
        _assert_same(_cgls(X, bounds, seed, 1), ref)
        with ThreadSchedule(n_blocks, mode="alternate"):
            _assert_same(_cgls(X, bounds, seed, n_blocks), ref)
        with ThreadSchedule(n_blocks, probe_pairs=1, probe_spacing=0.0):  # probes at every pair of iterations
            _assert_same(_cgls(X, bounds, seed, n_blocks), ref)

        v = rng.randn(X.shape[1])
        out_ref, out_one = np.empty(X.shape[0]), np.empty(X.shape[0])
        _kernels.csr_matvec_blocks(X.data, X.indices, X.indptr, bounds, v, out_ref, n_blocks)
        _kernels.csr_matvec_blocks(X.data, X.indices, X.indptr, bounds, v, out_one, 1)
        np.testing.assert_array_equal(out_one, out_ref)
        rows = np.flatnonzero(rng.rand(X.shape[0]) < 0.5).astype(np.intp)
        sub_ref, sub_sched = np.zeros(X.shape[0]), np.zeros(X.shape[0])
        _kernels.csr_matvec_subset(X.data, X.indices, X.indptr, rows, v, 0.5, sub_ref, n_blocks)
        with ThreadSchedule(n_blocks, mode="alternate"):
            for _ in range(2):
                _kernels.csr_matvec_subset(X.data, X.indices, X.indptr, rows, v, 0.5, sub_sched, n_blocks)
                np.testing.assert_array_equal(sub_sched, sub_ref)


@pytest.mark.parametrize("weighted", [False, True])
def test_belief_mean_is_the_same_on_one_thread(weighted):
    # belief_mean splits its rows into min(n_threads, n // 4096) blocks; under a schedule that runs them on one
    # thread (every other call in "alternate" mode) the value is bitwise the same.
    rng = np.random.RandomState(3)
    g = rng.randn(20_000)
    weight = rng.exponential(size=g.size) if weighted else np.empty(0)
    for n_threads in (2, 3, 4):
        ref = _kernels.belief_mean(0.1, g, 0.7, weight, n_threads)
        with ThreadSchedule(n_threads, mode="alternate"):
            values = [_kernels.belief_mean(0.1, g, 0.7, weight, n_threads) for _ in range(4)]
        assert values == [ref] * 4


def test_the_rule_keeps_the_faster_side_and_spaces_its_probes():
    s = ThreadSchedule(2, probe_pairs=2, probe_spacing=10.0)
    assert (s.threads, s.mode, s.probe_due) == (2, "adaptive", True)  # a fit starts on all threads, probing
    s.record_pair(0.010, 0.040)
    assert s.n_probes == 0 and s.probe_due  # a probe is probe_pairs pairs
    s.record_pair(0.012, 0.035)
    assert (s.threads, s.n_probes, s.n_switches) == (1, 1, 1)
    assert (s.probe_one, s.probe_many) == pytest.approx((0.022, 0.075))
    assert not s.probe_due  # it waits 10 * (0.075 - 0.022) s of iterations
    close = ThreadSchedule(3, probe_pairs=1, probe_spacing=0.0)
    close.record_pair(0.02, 0.02)
    assert close.threads == 3  # one thread must be clearly faster: timing noise must not halve an idle fit
    close.record_pair(0.017, 0.02)
    assert close.threads == 3  # 15% faster: within the margin
    close.record_pair(0.015, 0.02)
    assert (close.threads, close.n_probes, close.n_switches) == (1, 3, 1)
    close.record_pair(0.02, 0.01)
    assert (close.threads, close.n_probes, close.n_switches) == (3, 4, 2)
    assert not ThreadSchedule(2, mode="fixed").probe_due


def test_a_cgls_call_probes_first_then_runs_the_winner():
    rng = np.random.RandomState(0)
    X = sp.random(400, 80, density=0.2, format="csr", random_state=rng)
    bounds = np.array([0, 200, 400], dtype=np.intp)
    with ThreadSchedule(2, probe_spacing=1e9) as s:
        w, outputs, b, converged, n_iter = _cgls(X, bounds, 0, 2, max_iter=20)
    assert n_iter == 20 and not converged
    assert s.n_probes == 1 and s.probe_one > 0 and s.probe_many > 0
    # The schedule's rule: one thread only when clearly faster (within one_thread_margin of all threads' time).
    assert s.threads == (1 if s.probe_one <= s.one_thread_margin * s.probe_many else 2)
    # 3 pairs, then the remaining 14 iterations on the winner (no second probe within 1e9 probe costs)
    on_winner = 3 + 14
    assert (s.iterations_one, s.iterations_many) == ((on_winner, 3) if s.threads == 1 else (3, on_winner))
    with ThreadSchedule(2) as s:  # one block: nothing to choose, nothing timed
        _cgls(X, np.array([0, 400], dtype=np.intp), 0, 2, max_iter=5)
    assert s.iterations_one == s.iterations_many == s.n_probes == 0


def test_fit_threads_activates_a_schedule_for_its_thread_only(monkeypatch):
    assert _kernels.active_schedule() is None
    with fit_threads(1) as threads:
        assert threads is None and _kernels.active_schedule() is None
    with fit_threads(3) as threads:
        s = _kernels.active_schedule()
        assert s is threads and (s.max_threads, s.mode) == (3, "adaptive")
        seen = []
        t = threading.Thread(target=lambda: seen.append(_kernels.active_schedule()))
        t.start()
        t.join()
        assert seen == [None]  # another thread (another fit) has its own
    assert _kernels.active_schedule() is None
    monkeypatch.setattr(_rowblocks, "THREAD_MODE", "fixed")
    with fit_threads(2):
        assert _kernels.active_schedule().mode == "fixed"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_threads": 0}, "max_threads"),
        ({"max_threads": 2, "mode": "fast"}, "mode"),
        ({"max_threads": 2, "probe_pairs": 0}, "probe_pairs"),
        ({"max_threads": 2, "probe_spacing": -1.0}, "probe_spacing"),
        ({"max_threads": 2, "probe_spacing": float("nan")}, "probe_spacing"),
        ({"max_threads": 2, "one_thread_margin": 0.0}, "one_thread_margin"),
        ({"max_threads": 2, "one_thread_margin": 1.5}, "one_thread_margin"),
        ({"max_threads": 2, "one_thread_margin": float("nan")}, "one_thread_margin"),
    ],
)
def test_bad_schedule_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ThreadSchedule(**kwargs)


def _blocked_problem(monkeypatch):
    monkeypatch.setattr(_rowblocks, "MIN_BLOCK_NNZ", 100)  # two row blocks on this small problem
    rng = np.random.RandomState(5)
    X = sp.random(700, 400, density=0.05, format="csr", random_state=rng)
    y = (X @ rng.randn(400) > 0).astype(int)
    return X, np.where(rng.rand(700) < 0.12, y, -1)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(("Est", "max_iter"), [(TransductiveSVC, 3), (DeterministicAnnealingSVC, 1)])
def test_a_fit_whose_thread_count_flips_has_bitwise_the_same_coef(monkeypatch, Est, max_iter):
    # Short fits (max_iter): two-thread iterations are slow on a loaded machine, which is the point of the schedule.
    X, y_semi = _blocked_problem(monkeypatch)
    made = []

    class Recorded(ThreadSchedule):
        def __init__(self, n_threads, mode):
            if mode == "one":  # one thread from the start, never probing: the count never flips
                super().__init__(n_threads, probe_pairs=1, probe_spacing=float("inf"))
                self.record_pair(0.0, 1.0)
            else:
                super().__init__(n_threads, mode=mode)
            made.append(self)

    monkeypatch.setattr(_rowblocks, "ThreadSchedule", Recorded)
    fits = {}
    for mode in ("one", "alternate", "adaptive"):
        monkeypatch.setattr(_rowblocks, "THREAD_MODE", mode)
        # One solve per fit (safeguard off), so made[k] is the schedule of the k-th fit.
        fits[mode] = Est(alpha=1e-2, max_iter=max_iter, n_jobs=2, safeguard=None).fit(X, y_semi)
    pinned, flipped = made[0], made[1]
    assert pinned.iterations_one > 0 and pinned.iterations_many == 0
    assert flipped.iterations_one > 0 and flipped.iterations_many > 0  # the count did flip, iteration by iteration
    for mode in ("alternate", "adaptive"):
        np.testing.assert_array_equal(fits[mode].coef_, fits["one"].coef_)
        np.testing.assert_array_equal(fits[mode].intercept_, fits["one"].intercept_)
        np.testing.assert_array_equal(fits[mode].transduction_, fits["one"].transduction_)
