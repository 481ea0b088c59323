"""Tests of the built-in data and make_semi_supervised."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.datasets import load_pcmac, make_semi_supervised


def test_load_pcmac_matches_the_svmlin_split():
    data = load_pcmac()
    assert sp.isspmatrix_csr(data.X_train) and data.X_train.shape == (1460, 7510)
    assert data.X_test.shape == (486, 7510)
    assert np.bincount(data.y_train + 1).tolist() == [1410, 29, 21]
    assert np.bincount(data.y_test).tolist() == [244, 242]
    X_train, y_train, X_test, y_test = load_pcmac(return_X_y=True)
    np.testing.assert_array_equal(y_train, data.y_train)
    assert "SVMlin" in data.DESCR


@pytest.mark.parametrize("n_labeled", [10, 0.1])
def test_make_semi_supervised_is_stratified_and_seeded(n_labeled):
    y = np.repeat([0, 1, 2], [50, 30, 20])
    y_semi = make_semi_supervised(y, n_labeled, random_state=0)
    kept = y_semi != -1
    assert kept.sum() == 10
    assert np.bincount(y_semi[kept]).tolist() == [5, 3, 2]
    np.testing.assert_array_equal(y_semi[kept], y[kept])
    np.testing.assert_array_equal(y_semi, make_semi_supervised(y, n_labeled, random_state=0))
    assert y_semi.dtype == y.dtype


def test_make_semi_supervised_keeps_one_row_of_each_class():
    y = np.array([0] * 98 + [1, 2])
    y_semi = make_semi_supervised(y, 3, random_state=0)
    assert sorted(y_semi[y_semi != -1].tolist()) == [0, 1, 2]


def test_make_semi_supervised_strings_become_object_with_int_sentinel():
    y = np.array(["a", "b"] * 5)
    y_semi = make_semi_supervised(y, 4, random_state=0, stratify=False)
    assert y_semi.dtype == object and (y_semi == -1).sum() == 6


def test_make_semi_supervised_errors():
    with pytest.raises(ValueError, match="already contains -1"):
        make_semi_supervised([0, 1, -1], 2)
    with pytest.raises(ValueError, match="smaller than the number of classes"):
        make_semi_supervised([0, 1, 2], 2)
    with pytest.raises(ValueError, match="larger than the number of rows"):
        make_semi_supervised([0, 1, 1], 5)
    with pytest.raises(ValueError, match="n_labeled"):
        make_semi_supervised([0, 1, 1], 0)


def test_make_semi_supervised_per_class_keeps_n_rows_in_every_class():
    y = np.repeat([3, 5, 7], [40, 10, 25])
    y_semi = make_semi_supervised(y, 4, per_class=True, random_state=0)
    assert np.unique(y_semi[y_semi != -1], return_counts=True)[1].tolist() == [4, 4, 4]
    np.testing.assert_array_equal(y_semi[y_semi != -1], y[y_semi != -1])
    # the same draws as a RandomState walking the classes in sorted order
    rng = np.random.RandomState(0)
    expected = np.concatenate([rng.choice(np.flatnonzero(y == k), 4, replace=False) for k in (3, 5, 7)])
    np.testing.assert_array_equal(np.sort(np.flatnonzero(y_semi != -1)), np.sort(expected))
    with pytest.raises(ValueError, match="smallest class"):
        make_semi_supervised(y, 11, per_class=True)
    with pytest.raises(ValueError, match="int n_labeled"):
        make_semi_supervised(y, 0.5, per_class=True)
