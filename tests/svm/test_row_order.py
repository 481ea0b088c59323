"""The content order of rows, the same for dense and CSR rows (skssl.svm.kernels._row_order)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.kernels._row_order import distinct_rows
from skssl.utils.estimator_checks import _duplicate_entries

from .._tiers import fast_first


def _random_rows(seed):
    """Rows of few distinct values (negative, zero, ``-0.0``, positive), often repeated: many ties to break."""
    rng = np.random.RandomState(seed)
    n_rows, n_features = rng.randint(0, 40), rng.randint(1, 9)
    X = rng.choice([-2.0, -1.0, -0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 3.0], size=(n_rows, n_features))
    if n_rows and rng.rand() < 0.5:
        X = np.vstack([X, X[rng.randint(0, n_rows, rng.randint(1, 10))]])
    return X, rng


def _as_csr(X, rng):
    """A CSR copy of ``X`` in one of the forms a user may pass: stored zeros, unsorted indices, 64-bit indices,
    entries stored twice (scipy's value is their sum)."""
    A = sp.csr_matrix(X)
    if A.nnz and rng.rand() < 0.3:
        A = sp.csr_matrix((np.where(rng.rand(A.nnz) < 0.3, 0.0, A.data), A.indices, A.indptr), shape=A.shape)
    if A.nnz and rng.rand() < 0.3:
        A = _duplicate_entries(A, random_state=rng)
    if rng.rand() < 0.3:
        for i in range(A.shape[0]):
            a, b = A.indptr[i], A.indptr[i + 1]
            shuffle = rng.permutation(b - a)
            A.indices[a:b], A.data[a:b] = A.indices[a:b][shuffle], A.data[a:b][shuffle]
        A.has_sorted_indices = False
    if rng.rand() < 0.3:
        A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    if rng.rand() < 0.2:
        A = sp.csr_array(A)
    return A


def test_entries_stored_twice_are_one_entry_of_their_sum():
    """scipy reads a (row, column) stored twice as the sum of the two; the order must too."""
    A = sp.csr_matrix((np.array([1.0, -1.0, 2.0, 2.0]), np.array([0, 0, 1, 1]), np.array([0, 3, 4])), shape=(2, 2))
    np.testing.assert_array_equal(A.toarray(), [[0.0, 2.0], [0.0, 2.0]])
    first, group = distinct_rows(A)
    assert first.tolist() == [0] and group.tolist() == [0, 0]
    assert A.nnz == 4 and A.data.tolist() == [1.0, -1.0, 2.0, 2.0]  # the caller's matrix is left as it was


@pytest.mark.parametrize("seed", range(400))
def test_csr_rows_get_the_dense_order_groups_and_first_occurrences(seed):
    X, rng = _random_rows(seed)
    A = _as_csr(X, rng)
    dense = A.toarray()  # the values A holds (its stored zeros are zeros)
    if rng.rand() < 0.3:
        dense, A = dense.astype(np.float32), A.astype(np.float32)
    first, group = distinct_rows(dense)
    csr_first, csr_group = distinct_rows(A)
    np.testing.assert_array_equal(csr_first, first)
    np.testing.assert_array_equal(csr_group, group)


@pytest.mark.parametrize("seed", range(100))
def test_the_order_is_lexicographic_and_the_groups_are_the_equal_rows(seed):
    """An oracle that does not use ``np.unique``: Python's comparison of the rows as tuples."""
    X, rng = _random_rows(seed)
    A = _as_csr(X, rng)
    first, group = distinct_rows(A)
    rows = [tuple(float(v) for v in row) for row in A.toarray()]  # -0.0 == 0.0 for tuples too
    expected_distinct = sorted(set(rows))
    assert [rows[i] for i in first] == expected_distinct
    assert all(rows[i] == expected_distinct[g] for i, g in enumerate(group))
    assert all(rows.index(rows[i]) == i for i in first)  # first occurrences


def test_the_callers_matrix_is_left_as_it_was():
    A = sp.csr_matrix((np.array([3.0, 0.0, -1.0]), np.array([2, 0, 1]), np.array([0, 2, 3])), shape=(2, 3))
    A.has_sorted_indices = False
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    distinct_rows(A)
    for now, then in zip((A.data, A.indices, A.indptr), before):
        np.testing.assert_array_equal(now, then)


def test_the_cost_grows_with_the_non_zeros_not_with_the_columns():
    """A trillion columns: anything of ``n_features`` entries would not fit in memory."""
    rng = np.random.RandomState(0)
    n_rows, n_features = 300, 10**12
    indices = np.sort(rng.choice(10**6, (n_rows, 5), replace=False) * 10**6, axis=1)
    A = sp.csr_matrix((rng.choice([-1.0, 1.0], n_rows * 5), indices.ravel(), np.arange(n_rows + 1) * 5))
    A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(n_rows, n_features))
    A = sp.vstack([A, A[:50]]).tocsr()
    first, group = distinct_rows(A)
    assert first.shape == (300,) and np.array_equal(group[300:], group[:50])


def _overlapping_problem(seed, n_classes=2):
    X, y = make_classification(
        120, 8, n_informative=4, n_classes=n_classes, n_clusters_per_class=1, flip_y=0.1, random_state=seed
    )
    y_semi = np.where(np.random.RandomState(seed).rand(120) < 0.6, -1, y)
    return X, y_semi


def _csr(X, form):
    """``X`` as CSR: canonical, or with each entry stored twice (the same values, not canonical)."""
    A = _duplicate_entries(X) if form == "duplicate entries" else sp.csr_matrix(X)
    assert A.has_canonical_format == (form == "canonical")
    np.testing.assert_array_equal(A.toarray(), X)
    return A


CSR_FORMS = ["canonical", "duplicate entries"]


@pytest.mark.parametrize("form", CSR_FORMS)
@pytest.mark.parametrize("seed", range(20))
def test_dense_and_csr_rows_give_the_same_alpha_and_model(seed, form):
    """``alpha="auto"``'s check deals the labeled rows to folds in their content order, whatever the format.

    Seed 32 of this problem gave ``alpha_`` 0.0043 on the dense rows and 0.43 on the CSR ones when CSR rows were
    ordered by random projections.
    """
    X, y_semi = _overlapping_problem(32 + seed)
    dense = LinearL2SVC().fit(X, y_semi)
    sparse = LinearL2SVC().fit(_csr(X, form), y_semi)
    assert sparse.alpha_ == pytest.approx(dense.alpha_, rel=1e-12)  # the rule's scale: sums in another order
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "Estimator, n_classes",
    [(TransductiveSVC, 2), (DeterministicAnnealingSVC, 2), (PottsDeterministicAnnealingSVC, 3)],
)
@pytest.mark.parametrize("form", fast_first(CSR_FORMS))
# Seed 32 in the fast suite, all three in the whole suite.
@pytest.mark.parametrize(
    "seed", [32, pytest.param(33, marks=pytest.mark.slow), pytest.param(34, marks=pytest.mark.slow)]
)
def test_dense_and_csr_rows_give_the_same_semi_supervised_model(Estimator, n_classes, seed, form):
    """The safeguard's check, the annealing start's halves and the k-means start order rows the same way too."""
    X, y_semi = _overlapping_problem(seed, n_classes)
    dense = Estimator().fit(X, y_semi)
    sparse = Estimator().fit(_csr(X, form), y_semi)
    assert sparse.alpha_ == pytest.approx(dense.alpha_, rel=1e-12)
    assert sparse.safeguard_fell_back_ == dense.safeguard_fell_back_
    np.testing.assert_allclose(sparse.decision_function(X), dense.decision_function(X), rtol=1e-5, atol=1e-7)
