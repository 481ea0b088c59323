"""Tests of LabeledOnlyClassifier, the supervised baseline around any classifier."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import NotFittedError, UnsetMetadataPassedError
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

from skssl.base import NoUnlabeledDataWarning, UnlabeledAsClassWarning
from skssl.datasets import make_semi_supervised
from skssl.model_selection import SemiSupervisedKFold
from skssl.self_training import LabeledOnlyClassifier

METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function")


def _problem(seed, n_samples=60, n_classes=3, labeled_fraction=0.4):
    X, y = make_classification(
        n_samples=n_samples,
        n_features=5,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )
    rng = np.random.RandomState(seed)
    y_semi = y.copy()
    y_semi[rng.rand(n_samples) > labeled_fraction] = -1
    for k in range(n_classes):  # every class keeps two labeled rows
        y_semi[np.flatnonzero(y == k)[:2]] = k
    return X, y, y_semi


def _assert_same_outputs(a, b, X):
    for method in METHODS:
        if hasattr(b, method):
            np.testing.assert_array_equal(getattr(a, method)(X), getattr(b, method)(X), err_msg=method)


@pytest.mark.parametrize("seed", range(12))
def test_equals_the_estimator_fitted_by_hand_on_the_labeled_rows(seed):
    """Random problems, label types, sparse formats and weights: the same model as a fit by hand."""
    rng = np.random.RandomState(seed)
    X, _, y_semi = _problem(seed, n_classes=2 + seed % 3)
    labeled = y_semi != -1
    names = np.array(["ant", "bee", "cat", "dog"], dtype=object)
    kind = ("int", "negative", "float", "str")[seed % 4]
    if kind == "int":
        y_in, y_true = y_semi, y_semi[labeled]
    elif kind == "negative":  # classes -10, -9, ... with the -1 sentinel
        y_in = np.where(labeled, y_semi - 10, -1)
        y_true = y_in[labeled]
    elif kind == "float":
        y_in = np.where(labeled, y_semi * 2.0, -1.0)  # integral floats are class labels
        y_true = y_in[labeled]
    else:
        y_in = np.array([-1 if v == -1 else names[v] for v in y_semi], dtype=object)
        y_true = names[y_semi[labeled]].astype(str)
    X_in = X if seed % 3 == 0 else (sp.csr_matrix(X) if seed % 3 == 1 else sp.coo_matrix(X))
    weight = rng.uniform(0.2, 3.0, size=X.shape[0]) if seed % 2 else None
    y_before, X_before = y_in.copy(), X_in.copy()
    w_before = None if weight is None else weight.copy()

    ours = LabeledOnlyClassifier(LogisticRegression(C=0.5)).fit(X_in, y_in, sample_weight=weight)
    by_hand = LogisticRegression(C=0.5).fit(
        sp.csr_matrix(X)[labeled] if sp.issparse(X_in) else X[labeled],
        y_true,
        sample_weight=None if weight is None else weight[labeled],
    )
    np.testing.assert_array_equal(ours.classes_, np.unique(y_true))
    np.testing.assert_array_equal(ours.estimator_.coef_, by_hand.coef_)
    _assert_same_outputs(ours, by_hand, X)
    assert ours.predict(X).dtype.kind == by_hand.predict(X).dtype.kind
    # transduction_: given labels on labeled rows, the model's prediction elsewhere
    np.testing.assert_array_equal(ours.transduction_[labeled], y_true)
    np.testing.assert_array_equal(ours.transduction_[~labeled], by_hand.predict(X[~labeled]))
    # the caller's arrays are untouched
    np.testing.assert_array_equal(y_in, y_before)
    if sp.issparse(X_in):
        assert (X_in != X_before).nnz == 0 and X_in.format == X_before.format
    else:
        np.testing.assert_array_equal(X_in, X_before)
    if weight is not None:
        np.testing.assert_array_equal(weight, w_before)


def test_weights_of_unlabeled_rows_do_not_matter():
    X, _, y_semi = _problem(0)
    w = np.ones(X.shape[0])
    a = LabeledOnlyClassifier(LogisticRegression()).fit(X, y_semi, sample_weight=w)
    w[y_semi == -1] = 1e6
    b = LabeledOnlyClassifier(LogisticRegression()).fit(X, y_semi, sample_weight=w)
    np.testing.assert_array_equal(a.estimator_.coef_, b.estimator_.coef_)


def test_fully_labeled_y_is_a_plain_fit_without_warning():
    X, y, _ = _problem(1)
    X_coo = sp.coo_matrix(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoUnlabeledDataWarning)
        ours = LabeledOnlyClassifier(LogisticRegression()).fit(X_coo, y)
    np.testing.assert_array_equal(ours.estimator_.coef_, LogisticRegression().fit(X_coo, y).coef_)
    np.testing.assert_array_equal(ours.transduction_, y)


def test_sparse_input_reaches_the_estimator_sparse():
    seen = []

    class Recorder(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            seen.append(X)
            return super().fit(X, y, sample_weight=sample_weight)

    X, _, y_semi = _problem(2)
    for X_in in (sp.csr_matrix(X), sp.csc_matrix(X), sp.coo_matrix(X)):
        LabeledOnlyClassifier(Recorder()).fit(X_in, y_semi)
    assert all(sp.issparse(X_seen) and X_seen.shape == ((y_semi != -1).sum(), 5) for X_seen in seen)


def test_string_labels_with_the_integer_sentinel():
    X, _, y_semi = _problem(3, n_classes=2)
    y_obj = np.array([{0: "spam", 1: "ham", -1: -1}[v] for v in y_semi], dtype=object)
    clf = LabeledOnlyClassifier(LogisticRegression()).fit(X, list(y_obj))  # a plain list works too
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert set(clf.predict(X)) <= {"ham", "spam"}
    assert set(clf.transduction_) <= {"ham", "spam"}
    y_eval = y_obj.copy()
    y_eval[::4] = -1
    kept = np.array([v != -1 for v in y_eval])
    assert clf.score(X, y_eval) == pytest.approx(np.mean(clf.predict(X[kept]) == y_eval[kept].astype(str)))
    with pytest.raises(ValueError, match="integer -1"):
        LabeledOnlyClassifier(LogisticRegression()).fit(X, y_obj.astype(str))  # "-1" lost the sentinel


def test_errors_name_the_problem():
    X, _, y_semi = _problem(4)
    base = LabeledOnlyClassifier(LogisticRegression())
    with pytest.raises(ValueError, match="no labeled row"):
        base.fit(X, np.full(X.shape[0], -1))
    one_class = np.where(y_semi == 0, 0, -1)
    with pytest.raises(ValueError, match="only one class"):
        base.fit(X, one_class)
    with pytest.raises(ValueError, match="KNeighborsClassifier.fit does not take sample_weight"):
        LabeledOnlyClassifier(KNeighborsClassifier()).fit(X, y_semi, sample_weight=np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        base.fit(X, y_semi, groups=np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="precomputed"):
        LabeledOnlyClassifier(SVC(kernel="precomputed")).fit(X @ X.T, y_semi)
    with pytest.raises(ValueError, match="'estimator' parameter"):
        LabeledOnlyClassifier(StandardScaler()).fit(X, y_semi)  # no predict
    with pytest.raises(ValueError, match="sample_weight"):
        base.fit(X, y_semi, sample_weight=np.ones(3))
    with pytest.raises(NotFittedError):
        base.predict(X)


def test_precomputed_kernel_without_unlabeled_rows_is_a_plain_fit():
    X, y, _ = _problem(5)
    K = X @ X.T
    clf = LabeledOnlyClassifier(SVC(kernel="precomputed")).fit(K, y)
    np.testing.assert_array_equal(clf.decision_function(K), SVC(kernel="precomputed").fit(K, y).decision_function(K))


def test_methods_follow_the_wrapped_estimator():
    assert not hasattr(LabeledOnlyClassifier(LinearSVC()), "predict_proba")
    assert hasattr(LabeledOnlyClassifier(LinearSVC()), "decision_function")
    assert not hasattr(LabeledOnlyClassifier(KNeighborsClassifier()), "decision_function")
    X, _, y_semi = _problem(6)
    clf = LabeledOnlyClassifier(KNeighborsClassifier(3)).fit(X, y_semi)
    assert clf.predict_proba(X).shape == (X.shape[0], 3)
    assert not hasattr(clf, "decision_function")


def test_feature_names_and_text_pipelines():
    pd = pytest.importorskip("pandas")
    X, _, y_semi = _problem(7)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    clf = LabeledOnlyClassifier(LogisticRegression()).fit(df, y_semi)
    assert clf.n_features_in_ == 5 and list(clf.feature_names_in_) == list(df.columns)
    assert not hasattr(LabeledOnlyClassifier(LogisticRegression()), "n_features_in_")
    docs = ["good fun film", "bad dull plot", "fun and good", "dull and bad", "good", "bad", "fun", "dull"]
    y_text = np.array(["pos", "neg", -1, -1, "pos", "neg", -1, -1], dtype=object)
    text = LabeledOnlyClassifier(make_pipeline(TfidfVectorizer(), LogisticRegression())).fit(docs, y_text)
    assert text.predict(["good fun", "dull bad"]).tolist() == ["pos", "neg"]
    assert not hasattr(text, "n_features_in_")  # a vectorizer pipeline has none


class _MetadataClassifier(LogisticRegression):
    """LogisticRegression that records the metadata it receives (fit: ``row_meta``, predict: ``flag``)."""

    def fit(self, X, y, sample_weight=None, row_meta=None, scale=None):
        self.seen_ = {"sample_weight": sample_weight, "row_meta": row_meta, "scale": scale}
        return super().fit(X, y, sample_weight=sample_weight)

    def predict(self, X, flag=None):
        self.flag_ = flag
        return super().predict(X)


def test_metadata_routing_restricts_per_row_metadata_to_the_labeled_rows():
    X, _, y_semi = _problem(8)
    labeled = y_semi != -1
    w = np.arange(1.0, X.shape[0] + 1)
    meta = np.arange(X.shape[0]) * 10
    with config_context(enable_metadata_routing=True):
        inner = _MetadataClassifier().set_fit_request(sample_weight=True, row_meta=True, scale=True)
        inner.set_predict_request(flag=True)
        clf = LabeledOnlyClassifier(inner).fit(X, y_semi, sample_weight=w, row_meta=meta, scale=2.0)
        seen = clf.estimator_.seen_
        np.testing.assert_array_equal(seen["sample_weight"], w[labeled])
        np.testing.assert_array_equal(seen["row_meta"], meta[labeled])
        assert seen["scale"] == 2.0  # not per row: passed unchanged
        clf.predict(X, flag="on")
        assert clf.estimator_.flag_ == "on"
        reference = LogisticRegression().fit(X[labeled], y_semi[labeled], sample_weight=w[labeled])
        np.testing.assert_array_equal(clf.estimator_.coef_, reference.coef_)
        # sklearn's rule: weights passed to an estimator that did not say whether it wants them raise
        with pytest.raises(UnsetMetadataPassedError):
            LabeledOnlyClassifier(LogisticRegression()).fit(X, y_semi, sample_weight=w)
        # the meta-estimator has no fit request of its own; score's sample_weight is its own
        assert not hasattr(LabeledOnlyClassifier, "set_fit_request")
        assert hasattr(LabeledOnlyClassifier, "set_score_request")


def test_grid_search_with_routed_weights_through_semi_supervised_kfold():
    X, _, y_semi = _problem(9, n_samples=90)
    w = np.random.RandomState(0).uniform(0.5, 2.0, X.shape[0])
    with config_context(enable_metadata_routing=True):
        est = LabeledOnlyClassifier(LogisticRegression().set_fit_request(sample_weight=True))
        est.set_score_request(sample_weight=True)
        search = GridSearchCV(est, {"estimator__C": [0.1, 1.0]}, cv=SemiSupervisedKFold(3)).fit(
            X, y_semi, sample_weight=w
        )
    labeled = y_semi != -1
    best = LogisticRegression(C=search.best_params_["estimator__C"])
    best.fit(X[labeled], y_semi[labeled], sample_weight=w[labeled])
    np.testing.assert_array_equal(search.best_estimator_.estimator_.coef_, best.coef_)


def test_pickle_round_trip():
    X, _, y_semi = _problem(10)
    clf = LabeledOnlyClassifier(make_pipeline(StandardScaler(), LogisticRegression())).fit(X, y_semi)
    loaded = pickle.loads(pickle.dumps(clf))
    _assert_same_outputs(loaded, clf, X)
    np.testing.assert_array_equal(loaded.transduction_, clf.transduction_)


@pytest.fixture(scope="module")
def digits_split():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    return X_train, make_semi_supervised(y_train, 0.2, random_state=0), X_test, y_test


def test_digits_reproducer_gives_a_sane_score(digits_split):
    """The supervised baseline under SemiSupervisedKFold scores like a held-out test set."""
    X_train, y_semi, X_test, y_test = digits_split
    labeled = y_semi != -1

    def baseline():
        return make_pipeline(StandardScaler(), LabeledOnlyClassifier(LogisticRegression(max_iter=1000)))

    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error", UnlabeledAsClassWarning)
        bare = cross_val_score(
            make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
            X_train,
            y_semi,
            cv=SemiSupervisedKFold(3),
        ).mean()
        ours = cross_val_score(baseline(), X_train, y_semi, cv=SemiSupervisedKFold(3)).mean()
        held_out = baseline().fit(X_train, y_semi).score(X_test, y_test)
    by_hand = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    by_hand_cv = cross_val_score(by_hand, X_train[labeled], y_semi[labeled], cv=3).mean()
    print(f"bare {bare:.3f}  LabeledOnlyClassifier {ours:.3f}  by hand {by_hand_cv:.3f}  held-out {held_out:.3f}")
    assert bare < 0.2  # -1 learned as the majority class
    assert held_out > 0.85
    assert abs(ours - held_out) < 0.05
    assert abs(ours - by_hand_cv) < 0.05


def test_grid_search_with_semi_supervised_kfold(digits_split):
    X_train, y_semi, X_test, y_test = digits_split
    search = GridSearchCV(
        LabeledOnlyClassifier(make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))),
        {"estimator__logisticregression__C": [0.01, 1.0]},
        cv=SemiSupervisedKFold(3),
        scoring="f1_macro",
    )
    with threadpool_limits(1):
        search.fit(X_train, y_semi)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert -1 not in search.best_estimator_.classes_
    assert abs(search.best_score_ - search.score(X_test, y_test)) < 0.06
