"""The estimators of skssl.svm: conventions, bad input, invariances."""

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm.kernels._validation import as_float64_design
from skssl.svm.solvers._tsvm import tsvm

ESTIMATORS = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC]
SEMI = [TransductiveSVC, DeterministicAnnealingSVC]


def _data(seed=0, n=80, d=20, n_classes=2, per_class=3, sparse=True):
    rng = np.random.RandomState(seed)
    y = rng.randint(n_classes, size=n)
    X = rng.rand(n, d) * (rng.rand(n, d) < 0.3)
    X[np.arange(n), y] += 1.0  # class k lights up feature k
    y_semi = np.full(n, -1)
    for k in range(n_classes):
        y_semi[rng.choice(np.flatnonzero(y == k), per_class, replace=False)] = k
    return (sp.csr_matrix(X) if sparse else X), y, y_semi


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_binary_attributes_follow_svmlin_conventions(Est):
    X, y, y_semi = _data()
    est = Est(alpha=1e-2).fit(X, y_semi)
    assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)
    assert est.objective_.shape == (1,) and isinstance(est.n_iter_, int) and est.n_iter_ >= 1
    dec = est.decision_function(X)
    np.testing.assert_allclose(dec, (X @ est.coef_.T).ravel() + est.intercept_[0], rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(dec > 0).astype(int)])
    unl = y_semi == -1
    np.testing.assert_array_equal(est.transduction_[unl], est.predict(X[unl]))
    assert est.score(X, y) > 0.9


def test_tsvm_estimator_is_the_tsvm_solver():
    X, _y, y_semi = _data(1)
    est = TransductiveSVC(alpha=1e-2, positive_fraction=0.5, safeguard=None).fit(X, y_semi)
    res = tsvm(
        as_float64_design(X),
        np.where(y_semi == 1, 1.0, -1.0),
        y_semi != -1,
        alpha=1e-2,
        unlabeled_weight=1.0,
        positive_fraction=0.5,
    )
    np.testing.assert_array_equal(est.coef_[0], res.w)
    assert est.intercept_[0] == res.b and est.n_switches_[0] == res.n_switches
    np.testing.assert_allclose(est.decision_function(X), res.outputs, rtol=1e-9, atol=1e-12)


def test_positive_class_is_classes_one_and_renaming_flips_the_sign():
    X, _y, y_semi = _data(2)
    a = TransductiveSVC(alpha=1e-2, positive_fraction=0.4).fit(X, y_semi)
    names = np.array(["z", "a"], dtype=object)  # class 0 -> "z" sorts after class 1 -> "a"
    y_named = np.array([-1 if v == -1 else names[v] for v in y_semi], dtype=object)
    b = TransductiveSVC(alpha=1e-2, positive_fraction=0.6).fit(X, y_named)
    assert list(b.classes_) == ["a", "z"]
    np.testing.assert_allclose(b.decision_function(X), -a.decision_function(X), rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(b.predict(X), names[a.predict(X)].astype(str))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), perm_seed=st.integers(0, 10_000), which=st.sampled_from(ESTIMATORS))
def test_row_permutation_gives_the_same_model(seed, perm_seed, which):
    X, _, y_semi = _data(seed % 50, n=60, n_classes=2 + seed % 2)
    perm = np.random.RandomState(perm_seed).permutation(X.shape[0])
    a = which(alpha=1e-2).fit(X, y_semi)
    b = which(alpha=1e-2).fit(X[perm], y_semi[perm])
    # Same model up to the solvers' tolerances (DA's inner solves stop on an
    # absolute change of the objective of 1e-6), relative to the weights' scale.
    scale = np.abs(a.coef_).max()
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_array_equal(b.transduction_, a.transduction_[perm])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), offset=st.integers(-5, 5), which=st.sampled_from(ESTIMATORS))
def test_order_preserving_label_renaming_gives_the_same_model(seed, offset, which):
    X, _, y_semi = _data(seed % 50, n=60, n_classes=2 + seed % 2)
    codes = np.array([10, 20, 30]) + offset  # never -1
    y_new = np.where(y_semi == -1, -1, codes[np.maximum(y_semi, 0)])
    a = which(alpha=1e-2).fit(X, y_semi)
    b = which(alpha=1e-2).fit(X, y_new)
    np.testing.assert_array_equal(b.classes_, codes[: a.classes_.size])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(b.predict(X), codes[a.predict(X)])


@pytest.mark.parametrize("Est", SEMI)
def test_multiclass_is_one_vs_rest_with_own_fractions(Est):
    X, _y, y_semi = _data(3, n=90, n_classes=3, per_class=4)
    y_semi[np.flatnonzero(y_semi == -1)[:2]] = 0  # unequal labeled fractions: 6/4/4
    # One-vs-rest is the solver's structure: the safeguard's refit couples the classes, so it is off here.
    est = Est(alpha=1e-2, safeguard=None).fit(X, y_semi)
    assert est.coef_.shape == (3, X.shape[1]) and est.objective_.shape == (3,)
    assert est.decision_function(X).shape == (90, 3)
    lab = y_semi != -1
    for k in range(3):
        y_k = np.where(y_semi == -1, -1, (y_semi == k).astype(int))
        r_k = np.mean(y_semi[lab] == k)
        binary = Est(alpha=1e-2, positive_fraction=r_k, safeguard=None).fit(X, y_k)
        np.testing.assert_allclose(est.coef_[k], binary.coef_[0], rtol=1e-10, atol=1e-12)
        assert est.objective_[k] == pytest.approx(binary.objective_[0], rel=1e-10)
    parallel = clone(est).set_params(n_jobs=2).fit(X, y_semi)
    np.testing.assert_array_equal(parallel.coef_, est.coef_)
    explicit = clone(est).set_params(positive_fraction=[0.3, 0.3, 0.4]).fit(X, y_semi)
    assert not np.allclose(explicit.coef_, est.coef_)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_sparse_dense_and_float32_give_the_same_model(Est):
    X, _, y_semi = _data(4)
    sparse = Est(alpha=1e-2).fit(X, y_semi)
    dense = Est(alpha=1e-2).fit(X.toarray(), y_semi)
    single = Est(alpha=1e-2).fit(X.astype(np.float32), y_semi)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(single.coef_, sparse.coef_, rtol=1e-4, atol=1e-5)
    assert single.coef_.dtype == np.float64
    np.testing.assert_array_equal(single.predict(X), sparse.predict(X))


@pytest.mark.parametrize("Est", SEMI)
@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5])
def test_positive_fraction_outside_open_unit_interval_raises(Est, bad):
    X, _, y_semi = _data()
    with pytest.raises(ValueError, match="positive_fraction"):
        Est(positive_fraction=bad).fit(X, y_semi)


@pytest.mark.parametrize("Est", SEMI)
def test_positive_fraction_shape_rules(Est):
    X, _, y3 = _data(n_classes=3)
    with pytest.raises(ValueError, match="one fraction per class"):
        Est(positive_fraction=0.3).fit(X, y3)
    with pytest.raises(ValueError, match="positive_fraction has shape"):
        Est(positive_fraction=[0.5, 0.5]).fit(X, y3)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        Est(positive_fraction=[0.5, 0.0, 0.5]).fit(X, y3)
    X2, _, y2 = _data()
    with pytest.raises(ValueError, match="positive_fraction has shape"):
        Est(positive_fraction=[0.5, 0.5]).fit(X2, y2)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("alpha", [0.0, -1.0])
def test_non_positive_alpha_raises(Est, alpha):
    X, _, y_semi = _data()
    with pytest.raises(ValueError, match="alpha"):
        Est(alpha=alpha).fit(X, y_semi)


@pytest.mark.parametrize("Est", SEMI)
def test_non_positive_unlabeled_weight_raises(Est):
    X, _, y_semi = _data()
    with pytest.raises(ValueError, match="unlabeled_weight"):
        Est(unlabeled_weight=0.0).fit(X, y_semi)


def test_max_switches_must_be_positive():
    X, _, y_semi = _data()
    with pytest.raises(ValueError, match="max_switches"):
        TransductiveSVC(max_switches=0).fit(X, y_semi)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_empty_row_zero_column_and_huge_row_work(Est):
    X, y, y_semi = _data(5, sparse=False)
    X[7] = 0.0  # an empty row
    X[:, 11] = 0.0  # an all-zero column
    X[9, :5] = 1e10  # a row of huge values
    for X_in in (X, sp.csr_matrix(X)):
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            est = Est(alpha=1e-2).fit(X_in, y_semi)
            dec = est.decision_function(X_in)
        assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(dec))
        assert est.coef_[0, 11] == 0.0
        assert dec[7] == pytest.approx(est.intercept_[0])
        assert est.score(X_in, y) > 0.85


@pytest.mark.parametrize("Est", SEMI)
def test_one_unlabeled_row(Est):
    X, y, _ = _data(6)
    y_semi = y.copy()
    y_semi[0] = -1
    est = Est(alpha=1e-2).fit(X, y_semi)
    assert est.transduction_.shape == (X.shape[0],)
    assert est.score(X, y) > 0.9


@pytest.mark.parametrize("Est", SEMI)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_all_unlabeled_but_one_per_class(Est, n_classes):
    X, y, y_semi = _data(7, n=90, n_classes=n_classes, per_class=1)
    assert (y_semi != -1).sum() == n_classes
    est = Est(alpha=1e-2).fit(X, y_semi)
    assert set(est.transduction_) <= set(range(n_classes))
    assert est.score(X, y) > 0.8  # the clusters carry the labels


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_inputs_are_not_modified(Est):
    X, _, y_semi = _data(8)
    for X_in in (X, X.toarray(), X.astype(np.float32)):
        X_copy = X_in.copy()
        y_in = y_semi.copy()
        Est(alpha=1e-2).fit(X_in, y_in)
        if sp.issparse(X_in):
            assert (X_in != X_copy).nnz == 0 and X_in.dtype == X_copy.dtype
        else:
            np.testing.assert_array_equal(X_in, X_copy)
        np.testing.assert_array_equal(y_in, y_semi)


@pytest.mark.parametrize("Est", SEMI)
def test_unlabeled_rows_help_on_clustered_data(Est):
    X, y, y_semi = _data(9, n=200, per_class=1)
    supervised = LinearL2SVC(alpha=1e-2).fit(X, y_semi)
    semi = Est(alpha=1e-2, positive_fraction=np.mean(y == 1)).fit(X, y_semi)
    assert semi.score(X, y) >= supervised.score(X, y)
    assert semi.score(X, y) > 0.95


def test_verbose_prints_progress():
    X, _, y_semi = _data(10)
    for est, tag in [
        (TransductiveSVC(verbose=1), "[TSVM]"),
        (DeterministicAnnealingSVC(verbose=1), "[DA]"),
        (LinearL2SVC(verbose=1), "[LinearL2SVC]"),
    ]:
        out = io.StringIO()
        with redirect_stdout(out):
            est.fit(X, y_semi)
        assert tag in out.getvalue()


def test_da_is_no_worse_than_tsvm_objective_on_average():
    # Not a theorem, but DA is built to avoid TSVM's poor local minima; on
    # these small problems it must at least reach a comparable objective.
    gaps = []
    for seed in range(4):
        X, _, y_semi = _data(20 + seed, n=100, per_class=2)
        t = TransductiveSVC(alpha=1e-2, positive_fraction=0.5).fit(X, y_semi).objective_[0]
        d = DeterministicAnnealingSVC(alpha=1e-2, positive_fraction=0.5).fit(X, y_semi).objective_[0]
        gaps.append((d - t) / t)
    assert np.mean(gaps) < 0.05


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_sparse_array_and_csc_input(Est):
    X, _, y_semi = _data(11)
    ref = Est(alpha=1e-2).fit(X, y_semi)
    for X_in in (sp.csr_array(X), X.tocsc()):
        est = Est(alpha=1e-2).fit(X_in, y_semi)
        np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(est.decision_function(X_in), ref.decision_function(X), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_design_section_2_errors(Est):
    X, _, y_semi = _data(12, sparse=False)
    with pytest.raises(ValueError, match="no labeled"):
        Est().fit(X, np.full_like(y_semi, -1))
    with pytest.raises(ValueError, match="one class|1 class"):
        Est().fit(X, np.where(y_semi == 1, 0, y_semi))
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Est().fit(X_nan, y_semi)
    X_inf = X.copy()
    X_inf[4, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        Est().fit(sp.csr_matrix(X_inf), y_semi)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Est().fit(X, y_semi[:-1])
    fitted = Est(alpha=1e-2).fit(X, y_semi)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X[:, :-1])
