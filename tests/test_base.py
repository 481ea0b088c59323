"""Tests of the shared semi-supervised contract in skssl.base."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skssl.base import NoUnlabeledDataWarning, encode_semi_supervised_target, labeled_mask

from ._toy_estimator import SeededCentroidClassifier


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(-2, 1, (20, 3)), rng.normal(2, 1, (20, 3))])
    y = np.repeat([0, 1], 20)
    y_semi = np.full(40, -1)
    y_semi[[0, 1, 20, 21]] = y[[0, 1, 20, 21]]
    return X, y, y_semi


def test_encoding_of_integer_labels():
    classes, y_enc, mask = encode_semi_supervised_target([7, -1, 3, 7, -1])
    np.testing.assert_array_equal(classes, [3, 7])
    np.testing.assert_array_equal(y_enc, [1, -1, 0, 1, -1])
    np.testing.assert_array_equal(mask, [True, False, True, True, False])


def test_encoding_of_strings_mixed_with_minus_one():
    y = np.array(["spam", -1, "ham", "spam"], dtype=object)
    classes, y_enc, mask = encode_semi_supervised_target(y)
    assert list(classes) == ["ham", "spam"]
    np.testing.assert_array_equal(y_enc, [1, -1, 0, 1])


def test_float_minus_one_is_the_sentinel_and_other_negatives_are_classes():
    classes, y_enc, _ = encode_semi_supervised_target(np.array([-2.0, -1.0, 4.0]))
    np.testing.assert_array_equal(classes, [-2.0, 4.0])
    np.testing.assert_array_equal(y_enc, [0, -1, 1])


@pytest.mark.parametrize(
    "y, message",
    [
        ([-1, -1, -1], "no labeled row"),
        (np.array([], dtype=np.int64), "empty"),
        ([1, 1, -1], "one class"),
        (np.array(["a", "-1", "b"]), "object array"),
        (np.array([b"a", b"-1"]), "object array"),
        (np.array(["a", "-1", -1], dtype=object), "string '-1'"),
        # whatever reads as the number -1, in string and object arrays alike (a float y cast to str: "-1.0")
        (np.array(["a", " -1", "b"]), "object array"),
        (np.array(["0.0", "-1.0", "1.0"]), "object array"),
        (np.array([b"a", b"-1.0"]), "object array"),
        (np.array(["a", " -1", "b"], dtype=object), "string '-1'"),
        (np.array(["a", "-1.0", -1], dtype=object), "string '-1'"),
        (np.array(["a", 1, -1], dtype=object), "mix types"),
        (np.array([b"a", b"b", -1], dtype=object), "bytes.*decode them to str"),
        ([0.5, 1.5, -1], "Unknown label type"),
        ([0.0, np.nan, 1.0], "NaN"),
        ([0.0, np.inf, 1.0], "infinity"),
        (np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"), "cannot hold class labels"),
        (np.array([1 + 1j, 2 + 0j]), "Complex data not supported"),
        (None, "requires y to be passed"),
    ],
)
def test_bad_targets_raise_clear_errors(y, message):
    with pytest.raises(ValueError, match=message):
        encode_semi_supervised_target(y)


def test_no_unlabeled_row_warns_and_encodes():
    with pytest.warns(NoUnlabeledDataWarning, match="no unlabeled row"):
        classes, y_enc, mask = encode_semi_supervised_target([0, 1, 1])
    assert mask.all()


def test_labeled_mask_accepts_lists_and_columns():
    np.testing.assert_array_equal(labeled_mask([1, -1]), [True, False])
    with pytest.warns(Warning, match="column-vector"):
        np.testing.assert_array_equal(labeled_mask(np.array([[1], [-1]])), [True, False])


@pytest.mark.parametrize(
    "X_bad, message",
    [
        (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), "NaN"),
        (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X), "infinity"),
        (lambda X: X[:-1], "inconsistent numbers of samples"),
    ],
)
def test_bad_X_raises(data, X_bad, message):
    X, _, y_semi = data
    with pytest.raises(ValueError, match=message):
        SeededCentroidClassifier().fit(X_bad(X), y_semi)


def test_fit_does_not_modify_inputs(data):
    X, _, y_semi = data
    X_obj = np.array([-1 if v == -1 else "ab"[v] for v in y_semi], dtype=object)
    X_copy, y_copy, obj_copy = X.copy(), y_semi.copy(), X_obj.copy()
    SeededCentroidClassifier().fit(X, y_semi)
    SeededCentroidClassifier().fit(sp.csr_matrix(X), X_obj)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y_semi, y_copy)
    np.testing.assert_array_equal(X_obj, obj_copy)


def test_score_ignores_unlabeled_rows(data):
    X, y, y_semi = data
    est = SeededCentroidClassifier().fit(X, y_semi)
    y_eval = y.copy()
    y_eval[:10] = -1
    assert est.score(X, y_eval) == pytest.approx(np.mean(est.predict(X[10:]) == y[10:]))
    with pytest.raises(ValueError, match="every row of y is -1"):
        est.score(X, np.full(40, -1))
    with pytest.raises(ValueError, match="no rows"):
        est.score(X[:0], y[:0])


def test_score_with_string_labels_and_sample_weight(data):
    X, y, y_semi = data
    names = np.array(["neg", "pos"], dtype=object)
    y_obj = np.array([-1 if v == -1 else names[v] for v in y_semi], dtype=object)
    est = SeededCentroidClassifier().fit(X, y_obj)
    y_eval = names[y].copy()
    y_eval[5] = -1
    weight = np.arange(40, dtype=float)
    expected = np.average(est.predict(X) == names[y], weights=np.where(y_eval == -1, 0, weight))
    assert est.score(X, y_eval, sample_weight=weight) == pytest.approx(expected)


@pytest.mark.parametrize("as_labels", [lambda v: v, bool], ids=["integers", "booleans"])
@pytest.mark.parametrize("container", [np.asarray, pd.Series], ids=["ndarray", "Series"])
def test_score_reads_numeric_labels_of_an_object_y_as_fit_does(data, as_labels, container):
    # An object y of integers (a pandas column of dtype object) or booleans, mixed with -1: fit accepts it, and
    # score compared the raw object labels with the predictions, which scikit-learn's metrics refuse.
    X, y, y_semi = data
    y_obj = container(np.array([-1 if v == -1 else as_labels(v) for v in y_semi], dtype=object))
    est = SeededCentroidClassifier().fit(X, y_obj)
    y_eval = np.array([-1 if i < 5 else as_labels(v) for i, v in enumerate(y)], dtype=object)
    expected = np.mean(est.predict(X[5:]) == np.array([as_labels(v) for v in y[5:]]))
    assert est.score(X, container(y_eval)) == pytest.approx(expected)


def test_transduction_keeps_labeled_rows(data):
    X, y, y_semi = data
    est = SeededCentroidClassifier().fit(X, y_semi)
    labeled = y_semi != -1
    np.testing.assert_array_equal(est.transduction_[labeled], y_semi[labeled])
    assert np.mean(est.transduction_ == y) > 0.9


def test_works_in_pipeline_and_grid_search_with_default_score(data):
    from skssl.model_selection import SemiSupervisedKFold

    X, y, y_semi = data
    y_semi = y_semi.copy()
    y_semi[[2, 3, 22, 23]] = y[[2, 3, 22, 23]]
    pipe = make_pipeline(StandardScaler(), SeededCentroidClassifier())
    search = GridSearchCV(pipe, {"seededcentroidclassifier__max_iter": [1, 3]}, cv=SemiSupervisedKFold(2))
    search.fit(X, y_semi)
    assert search.best_score_ > 0.9
    assert clone(search.best_estimator_).fit(X, y_semi).score(X, y) > 0.9


def test_a_supervised_estimator_on_the_contract_does_not_warn(data):
    import warnings

    from skssl.svm import LinearL2SVC

    X, y, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoUnlabeledDataWarning)
        LinearL2SVC().fit(X, y)
    with pytest.warns(NoUnlabeledDataWarning):
        SeededCentroidClassifier().fit(X, y)


def test_score_accepts_coo(data):
    # Regression: fit/predict took COO but score failed with "'coo_matrix' object is not subscriptable".
    X, y, y_semi = data
    clf = SeededCentroidClassifier().fit(sp.coo_matrix(X), y_semi)
    y_test = y.copy()
    y_test[::3] = -1
    assert clf.score(sp.coo_matrix(X), y_test) == clf.score(X, y_test)


def test_plain_list_of_strings_and_minus_one_is_read_as_objects(data):
    # Regression: numpy turns the -1 of ["spam", -1, "ham"] into "-1" and the list was rejected,
    # while the same values in a pandas Series (object dtype) worked.
    pd = pytest.importorskip("pandas")
    X, y, y_semi = data
    y_list = [-1 if v == -1 else ("spam" if v else "ham") for v in y_semi.tolist()]
    from_list = SeededCentroidClassifier().fit(X, y_list)
    from_series = SeededCentroidClassifier().fit(X, pd.Series(y_list))
    assert list(from_list.classes_) == ["ham", "spam"]
    np.testing.assert_array_equal(from_list.transduction_, from_series.transduction_)
    assert from_list.score(X, y_list) == 1.0
    classes, y_enc, mask = encode_semi_supervised_target(("spam", -1, "ham"))
    assert list(classes) == ["ham", "spam"] and y_enc.tolist() == [1, -1, 0]


def test_plain_list_of_strings_with_string_minus_one_still_raises():
    with pytest.raises(ValueError, match="object array"):
        labeled_mask(["spam", "-1", "ham"])


@pytest.mark.parametrize("label", ["-10", "1", "-1a", "minus one", "", " ", "nan", "-1e1"])
def test_strings_that_do_not_read_as_minus_one_are_classes(label):
    y = np.array([label, "b", "b"] if label != "b" else ["a", "b"])
    for target in (y, y.astype(object)):
        classes, _, labeled = encode_semi_supervised_target(target)
        assert labeled.all() and label in classes


def test_the_error_names_the_label_that_reads_as_minus_one():
    with pytest.raises(ValueError, match=r"\(as '-1\.0'\)"):
        encode_semi_supervised_target(np.array(["a", "-1.0", "b"]))
    with pytest.raises(ValueError, match=r"\(as ' -1'\)"):
        encode_semi_supervised_target(np.array(["a", " -1", -1], dtype=object))
