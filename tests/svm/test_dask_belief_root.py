"""DA's belief threshold on row blocks: the shared rounds of thresholds give brentq's root (no cluster needed)."""

import itertools

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from skssl.svm.solvers._da import belief_root, guess_thresholds, optimize_p
from skssl.svm.dask._dask_da import _sums


class Blocks:
    """``g`` and its weights split into row blocks, evaluated as the Dask fit does: sums per block, in order."""

    def __init__(self, g, T, r, weight=None, n_blocks=3):
        self.g, self.T, self.r = g, T, r
        self.weight = np.ones(g.size) if weight is None else weight
        self.parts = np.array_split(np.arange(g.size), n_blocks)
        self.rounds = 0

    def __call__(self, xs):
        self.rounds += 1
        sums = sum(_sums(self.g[i], self.weight[i], xs, self.T) for i in self.parts)
        total = self.weight.sum()
        return sums[:, 0] / total - self.r, sums[:, 1] / (total * self.T)

    def mean(self, nu):
        with np.errstate(over="ignore"):
            return np.average(1.0 / (1.0 + np.exp((self.g - nu) / self.T)), weights=self.weight)

    def root(self, **kwargs):
        return belief_root(self, self.g.min(), self.g.max(), self.T, self.r, **kwargs)


def _brentq_root(g, T, r, weight):
    """An independent reference: brentq on numpy's weighted mean of the beliefs, on a bracket that holds the root."""

    def excess(nu):
        return np.average(expit((nu - g) / T), weights=weight) - r

    shift = T * np.log((1.0 - r) / r)
    lo, hi = g.min() - shift - max(T, 1.0), g.max() - shift + max(T, 1.0)
    return brentq(excess, lo, hi, xtol=1e-11 * T, rtol=4 * np.finfo(float).eps, maxiter=4000)


CASES = list(itertools.product(range(6), [10.0, 1.0, 1e-2, 1e-5], [0.05, 0.5, 0.93]))


@pytest.mark.parametrize("seed, T, r", CASES)
def test_the_root_in_rounds_is_brentqs(seed, T, r):
    # Gaps on three scales against four temperatures, weighted for odd seeds.
    rng = np.random.RandomState(seed)
    scale = rng.choice([0.1, 4.0, 1e3])
    weight = rng.uniform(0.2, 3.0, 300) if seed % 2 else None
    g = scale * rng.randn(300)
    blocks = Blocks(g, T, r, weight)
    nu = blocks.root()
    nu_brentq = _brentq_root(g, T, r, weight)
    # The same root: to brentq's tolerance in nu, or to the rounding of the mean where it is flat.
    assert abs(nu - nu_brentq) <= 2e-11 * T + 8 * np.finfo(float).eps * abs(nu_brentq) or (
        abs(blocks.mean(nu) - r) <= 1e-14 and abs(blocks.mean(nu_brentq) - r) <= 1e-14
    )
    assert abs(blocks.mean(nu) - r) <= 1e-9
    assert blocks.rounds <= 10


@pytest.mark.parametrize("T", [1.0, 1e-2])
def test_a_good_guess_takes_one_round(T):
    rng = np.random.RandomState(0)
    g = rng.randn(500)
    blocks = Blocks(g, T, 0.3)
    nu = blocks.root()
    for offset in [0.0, 1e-5, 1e-3, -1e-3]:
        blocks.rounds = 0
        near = nu + offset * T
        assert blocks.root(guess=near) == pytest.approx(nu, abs=1e-10 * T)
        assert blocks.rounds == 1
        # The same thresholds evaluated beforehand (in the w-step's last round): no round at all.
        xs = guess_thresholds(near, T)
        tried = (xs, *Blocks(g, T, 0.3)(xs))
        blocks.rounds = 0
        assert blocks.root(tried=tried) == pytest.approx(nu, abs=1e-10 * T)
        assert blocks.rounds == 0


def test_a_bad_guess_still_finds_the_root():
    rng = np.random.RandomState(1)
    g = rng.randn(400) * 4.0
    blocks = Blocks(g, 0.01, 0.6)
    nu = blocks.root()
    for guess in [g.max() + 50.0, g.min() - 3.0, nu + 7.0]:
        assert blocks.root(guess=guess) == pytest.approx(nu, abs=1e-9)


def test_extreme_gaps_and_constant_gaps():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        blocks = Blocks(np.array([-1e300, 0.0, 1e300, 5.0]), 1e-6, 0.5, n_blocks=2)
        with np.errstate(over="ignore"):  # exp's overflow to inf is how a far row's belief becomes 0
            nu = blocks.root()
    assert blocks.mean(nu) == pytest.approx(0.5, abs=1e-12)  # any nu well inside (0, 5) is a root
    constant = Blocks(np.full(7, 3.0), 0.1, 0.3)
    nu = constant.root()
    assert constant.mean(nu) == pytest.approx(0.3, abs=1e-12)


def test_threshold_sums_are_the_direct_ones():
    # The compiled sums of a round of thresholds, over many random problems (temperatures from 1e-4 to 10,
    # gaps and thresholds spread over up to 1e5 temperatures, so that the exponentials overflow and underflow),
    # are those of expit at each threshold.
    rng = np.random.default_rng(0)
    for _ in range(300):
        T = 10.0 ** rng.uniform(-4, 1)
        n = int(rng.integers(0, 300))
        g = rng.normal(0.0, T * 10.0 ** rng.uniform(-1, 5), n)
        weight = rng.uniform(0.0, 2.0, n)
        xs = rng.choice(g, 7) + T * rng.normal(0.0, 10.0 ** rng.uniform(-6, 3), 7) if n else rng.normal(size=7)
        got = _sums(g, weight, xs, T)
        p = expit((xs[:, None] - g[None, :]) / T)
        want = np.c_[p @ weight, (p * (1.0 - p)) @ weight]
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13 * max(weight.sum(), 1.0))


@pytest.mark.parametrize("seed, T, r", CASES[::5])
def test_the_in_memory_beliefs_take_the_same_root(seed, T, r):
    """optimize_p's threshold is the one search's, on one block: the Dask fit's root and brentq's."""
    rng = np.random.RandomState(seed)
    g = rng.choice([0.1, 4.0, 1e3]) * rng.randn(300)
    weight = rng.uniform(0.2, 3.0, 300) if seed % 2 else None
    nu = Blocks(g, T, r, weight).root()
    with np.errstate(over="ignore"):
        p = optimize_p(g, T, r, weight=weight, n_threads=2)
    np.testing.assert_allclose(p, expit((nu - g) / T), rtol=1e-8, atol=1e-12)
    assert abs(np.average(p, weights=weight) - r) <= 1e-9
