"""Tests of make_semi_supervised on targets a user hands in: unsigned, string, boolean labels."""

import numpy as np
import pytest

from skssl.base import encode_semi_supervised_target
from skssl.datasets import make_semi_supervised

from .._toy_estimator import SeededCentroidClassifier


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [(np.uint8, np.int16), (np.uint16, np.int32), (np.uint32, np.int64), (np.uint64, np.int64)],
)
def test_unsigned_labels_come_back_signed(dtype, expected):
    # Regression: np.uint8 labels (MNIST as keras/torchvision ship it) raised OverflowError.
    y = np.array([0, 1, 2, 255, 0, 1, 2, 255], dtype=dtype)
    y_semi = make_semi_supervised(y, 4, random_state=0)
    assert y_semi.dtype == expected
    labeled = y_semi != -1
    assert labeled.sum() == 4
    np.testing.assert_array_equal(y_semi[labeled], y[labeled])
    classes, _, _ = encode_semi_supervised_target(y_semi)
    np.testing.assert_array_equal(classes, [0, 1, 2, 255])
    assert y.dtype == dtype  # the input is not modified


def test_uint64_labels_beyond_int64_raise():
    y = np.array([0, 1, 2**63, 1], dtype=np.uint64)
    with pytest.raises(ValueError, match="LabelEncoder"):
        make_semi_supervised(y, 2, random_state=0)


def test_unsigned_result_fits_an_estimator():
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(-2, 1, (20, 2)), rng.normal(2, 1, (20, 2))])
    y = np.repeat(np.array([3, 7], dtype=np.uint8), 20)
    clf = SeededCentroidClassifier().fit(X, make_semi_supervised(y, 6, random_state=0))
    np.testing.assert_array_equal(clf.classes_, [3, 7])
    assert clf.score(X, y) > 0.9


@pytest.mark.parametrize(
    "y",
    [
        np.array(["-1", "a", "b", "a", "b", "-1"]),
        np.array(["-1", "a", "b", "a", "b", "-1"], dtype=object),
        np.array([" -1", "a", "b", "a", "b", "-1.0"]),
        np.array(["-1.0", "a", "b", "a", "b", " -1 "], dtype=object),
        np.array([-1, 0, 1, 0, 1, -1]),
        np.array([-1.0, 0.0, 1.0, 0.0, 1.0, -1.0]),
        np.array([-1, "a", "b", "a"], dtype=object),
    ],
)
def test_a_class_that_reads_as_minus_one_raises(y):
    # Regression: a string class "-1" gave a target that every estimator then rejected.
    with pytest.raises(ValueError, match="unlabeled marker"):
        make_semi_supervised(y, 3, random_state=0)


def test_string_labels_come_back_as_objects_with_integer_minus_one():
    y = np.array(["spam", "ham", "spam", "ham", "eggs", "eggs"])
    y_semi = make_semi_supervised(y, 3, random_state=0)
    assert y_semi.dtype == object
    hidden = [v for v in y_semi if not isinstance(v, str)]
    assert hidden == [-1, -1, -1] and all(type(v) is int for v in hidden)
    classes, _, _ = encode_semi_supervised_target(y_semi)
    assert list(classes) == ["eggs", "ham", "spam"]


def test_boolean_labels_come_back_as_objects():
    y = np.array([True, False, True, False, True, False])
    y_semi = make_semi_supervised(y, 2, random_state=0)
    assert y_semi.dtype == object
    classes, _, mask = encode_semi_supervised_target(y_semi)
    assert mask.sum() == 2
    np.testing.assert_array_equal(classes, [False, True])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_signed_and_float_labels_keep_their_dtype(dtype):
    y = np.array([0, 1, 2, 0, 1, 2], dtype=dtype)
    assert make_semi_supervised(y, 3, random_state=0).dtype == dtype
