"""sample_weight and class_weight: weight 2 is a duplicated row, weight 0 a removed one."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.solvers._mfn import l2_svm_mfn

from .._tiers import fast_first

ESTIMATORS = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC]


def _data(seed=0, n=90, d=25, sparse=True):
    rng = np.random.RandomState(seed)
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng)
    X.data = rng.randn(X.nnz)
    w = rng.randn(d)
    y = (X @ w > 0).astype(int)
    y_semi = np.where(rng.rand(n) < 0.3, y, -1)
    return (X if sparse else X.toarray()), y, y_semi


def _duplicate(X, y, rows):
    idx = np.concatenate([np.arange(X.shape[0]), rows])
    return X[idx], y[idx]


def test_mfn_cost_weight_two_is_a_duplicated_term_exactly():
    X, y, _ = _data(1)
    t = np.where(y == 1, 1.0, -1.0)
    dup = np.array([3, 7, 7, 20])
    w = np.ones(X.shape[0])
    np.add.at(w, dup, 1.0)
    weighted = l2_svm_mfn(X, t, w / w.sum(), alpha=1e-2)
    Xd, td = _duplicate(X, t, dup)
    duplicated = l2_svm_mfn(Xd, td, np.full(td.size, 1.0 / td.size), alpha=1e-2)
    assert weighted.objective == pytest.approx(duplicated.objective, rel=1e-12)
    np.testing.assert_allclose(weighted.w, duplicated.w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("which", ["labeled", "unlabeled"])
def test_weight_two_equals_the_row_twice(Est, which):
    X, _, y_semi = _data(2)
    pool = np.flatnonzero((y_semi != -1) if which == "labeled" else (y_semi == -1))
    if Est is TransductiveSVC and which == "unlabeled":
        pytest.skip("TSVM's balance constraint counts unlabeled rows (see _base decisions)")
    dup = pool[[0, 3, 5]]
    sw = np.ones(X.shape[0])
    sw[dup] = 2.0
    kw = {"alpha": 1e-2} if Est is LinearL2SVC else {"alpha": 1e-2, "positive_fraction": 0.5}
    a = Est(**kw).fit(X, y_semi, sample_weight=sw)
    Xd, yd = _duplicate(X, y_semi, dup)
    b = Est(**kw).fit(Xd, yd)
    assert a.objective_[0] == pytest.approx(b.objective_[0], rel=1e-7)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_zero_weight_removes_the_row(Est):
    X, _, y_semi = _data(3)
    drop = np.array([1, 2, 10, 40, 41])
    sw = np.ones(X.shape[0])
    sw[drop] = 0.0
    keep = np.setdiff1d(np.arange(X.shape[0]), drop)
    a = Est(alpha=1e-2).fit(X, y_semi, sample_weight=sw)
    b = Est(alpha=1e-2).fit(X[keep], y_semi[keep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert a.objective_[0] == pytest.approx(b.objective_[0], rel=1e-12)
    assert a.transduction_.shape == (X.shape[0],)
    np.testing.assert_array_equal(a.transduction_[keep], b.transduction_)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_unit_weights_are_no_weights(Est):
    X, _, y_semi = _data(4)
    a = Est(alpha=1e-2).fit(X, y_semi, sample_weight=np.ones(X.shape[0]))
    b = Est(alpha=1e-2).fit(X, y_semi)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_class_weight_multiplies_the_labeled_rows(Est):
    X, _, y_semi = _data(5)
    lab = y_semi != -1
    # Class weights do not enter the safeguard's spread of the fractions (sample weights do), so the
    # equivalence below is the solver's: safeguard off.
    kw = {"alpha": 1e-2} if Est is LinearL2SVC else {"alpha": 1e-2, "positive_fraction": 0.5, "safeguard": None}
    a = Est(class_weight={0: 1.0, 1: 3.0}, **kw).fit(X, y_semi)
    sw = np.where(lab & (y_semi == 1), 3.0, 1.0)
    b = Est(**kw).fit(X, y_semi, sample_weight=sw)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # "balanced": n_labeled / (n_classes * count) over the labeled rows, as LinearSVC.
    counts = np.bincount(y_semi[lab])
    balanced = lab.sum() / (2 * counts)
    c = Est(class_weight="balanced", **kw).fit(X, y_semi)
    d = Est(**kw).fit(X, y_semi, sample_weight=np.where(lab, balanced[np.maximum(y_semi, 0)], 1.0))
    np.testing.assert_array_equal(c.coef_, d.coef_)
    assert not np.allclose(a.coef_, Est(**kw).fit(X, y_semi).coef_)


def test_sample_weight_is_validated_and_not_modified():
    X, _, y_semi = _data(6)
    sw = np.linspace(0.5, 2.0, X.shape[0])
    copy = sw.copy()
    DeterministicAnnealingSVC(alpha=1e-2).fit(X, y_semi, sample_weight=sw)
    np.testing.assert_array_equal(sw, copy)
    with pytest.raises(ValueError, match="(?i)negative"):
        LinearL2SVC().fit(X, y_semi, sample_weight=-sw)
    with pytest.raises(ValueError, match="every labeled row"):
        LinearL2SVC().fit(X, y_semi, sample_weight=np.where(y_semi == -1, 1.0, 0.0))


@pytest.mark.parametrize("seed", range(12))
def test_weights_whose_sum_leaves_float64_are_named_in_the_error(seed):
    # Every weight finite, their sum not: two rows of 1e308 once gave "the bias's penalty ... outside float64's
    # range" (LinearL2SVC) or "probabilities do not sum to 1" (k-means, TSVM and DA), with overflow warnings;
    # weights of 5e-324 an infinite alpha_. Over random problems, estimators, weights and class_weight:
    # a ValueError that names sample_weight, no numpy warning, and the caller's array unchanged.
    rng = np.random.RandomState(seed)
    X, _, y_semi = _data(seed, n=40, d=5, sparse=bool(seed % 2))
    Est = [*ESTIMATORS, PottsDeterministicAnnealingSVC][seed % 4]
    sw = rng.uniform(0.5, 2.0, X.shape[0])
    kind = ["overflow", "underflow", "class_weight overflow"][seed % 3]
    if kind == "overflow":
        sw[rng.choice(X.shape[0], 2, replace=False)] = 1e308
    elif kind == "underflow":
        sw[:] = 5e-324 * rng.randint(1, 4, X.shape[0])
    kw = {"class_weight": {0: 1e300, 1: 1.0}} if kind == "class_weight overflow" else {}
    if kind == "class_weight overflow":
        sw[y_semi == 0] = 1e10
    before = sw.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="sample_weight.*(more than float64 holds|below float64's normal)"):
            Est(**kw).fit(X, y_semi, sample_weight=sw)
    np.testing.assert_array_equal(sw, before)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_class_weight_does_not_change_the_callers_sample_weight(Est):
    # fit used to multiply class_weight into a float64 sample_weight in place, so a second fit with
    # the same array saw the class weights twice.
    X, _, y_semi = _data(7)
    sw = np.linspace(0.5, 2.0, X.shape[0])
    copy = sw.copy()
    first = Est(alpha=1e-2, class_weight={0: 1.0, 1: 2.5}).fit(X, y_semi, sample_weight=sw)
    np.testing.assert_array_equal(sw, copy)
    second = Est(alpha=1e-2, class_weight={0: 1.0, 1: 2.5}).fit(X, y_semi, sample_weight=sw)
    np.testing.assert_array_equal(first.coef_, second.coef_)


@pytest.mark.parametrize("seed", fast_first(range(6), 2))
def test_a_class_without_labeled_weight_is_named_in_the_error(seed):
    # Property: a fit raises exactly when some class's labeled rows all weigh 0 (sample_weight times class_weight),
    # and the error names that class. Before, DA and Potts DA complained of positive_fraction, which nobody had
    # set, and TSVM returned a model that never predicted the class.
    from skssl.svm import PottsDeterministicAnnealingSVC

    rng = np.random.RandomState(seed)
    n_classes, n = rng.choice([2, 3]), rng.randint(40, 100)
    y = rng.randint(0, n_classes, n)
    X = rng.randn(n, 3) + y[:, None]
    y_semi = np.where(rng.rand(n) < 0.4, y, -1)
    for k in range(n_classes):
        y_semi[np.flatnonzero(y == k)[:3]] = k
    weight = np.where(rng.rand(n) < 0.3, 0.0, 1.0 + rng.rand(n))
    weight[(y_semi == seed % n_classes)] = 0.0  # one class loses all its labeled weight
    estimators = ESTIMATORS + ([PottsDeterministicAnnealingSVC] if n_classes > 2 else [])
    for Est in estimators:
        with pytest.raises(ValueError, match=rf"every labeled row of class \[{seed % n_classes}\]"):
            Est().fit(X, y_semi, sample_weight=weight)
        weight_kept = weight.copy()
        weight_kept[(y_semi == seed % n_classes)] = 1.0
        Est().fit(X, y_semi, sample_weight=weight_kept)  # every class weighted: fits
    class_weight = {k: float(k != seed % n_classes) for k in range(n_classes)}
    with pytest.raises(ValueError, match="every labeled row of class"):
        TransductiveSVC(class_weight=class_weight).fit(X, y_semi)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("bad", [-1.0, -1e-12, np.nan, np.inf])
def test_a_negative_or_non_finite_class_weight_is_named(Est, bad):
    # It used to be reported as "every labeled row of the class has weight 0", which names the wrong problem.
    X, _, y_semi = _data(3)
    with pytest.raises(ValueError, match=r"class_weight must be finite and non-negative; got \{0: "):
        Est(class_weight={0: bad, 1: 1.0}).fit(X, y_semi)
    Est(class_weight={0: 0.5, 1: 2.0}).fit(X, y_semi)  # positive values are fine
