"""The seeded endless sampler: every row once before any row twice, seeded, continuing."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("skorch")

from skssl.deep._samplers import EndlessSampler  # noqa: E402


def test_each_row_once_per_pass_and_epochs_continue():
    sampler = EndlessSampler(5, num_samples=3, seed=0)
    drawn = list(sampler) + list(sampler) + list(sampler) + list(sampler)  # 12 indices = 2.4 passes
    assert sorted(drawn[:5]) == list(range(5)) and sorted(drawn[5:10]) == list(range(5))
    assert len(sampler) == 3


def test_same_seed_same_stream():
    a = EndlessSampler(7, 0, seed=3).take(20)
    b = EndlessSampler(7, 0, seed=3).take(20)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, EndlessSampler(7, 0, seed=4).take(20))
