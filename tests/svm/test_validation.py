"""The design matrix the linear solvers see (skssl.svm.kernels._validation): entries stored twice are summed first."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from skssl.svm import TransductiveSVC
from skssl.svm.kernels import _validation
from skssl.svm import _base
from skssl.svm.kernels._validation import as_float64_design, has_duplicate_entries, without_duplicate_entries


def _random_csr(rng):
    """Rows of 0 to 5 random column indices, unsorted, often repeated within a row."""
    n_rows, n_features = rng.randint(0, 30), rng.randint(1, 20)
    lengths = rng.randint(0, 6, n_rows)
    indptr = np.r_[0, np.cumsum(lengths)]
    indices = rng.randint(0, n_features, indptr[-1])
    X = sp.csr_matrix((rng.randn(indptr[-1]), indices, indptr), shape=(n_rows, n_features))
    duplicated = any(len(set(indices[a:b])) < b - a for a, b in zip(indptr[:-1], indptr[1:]))
    return X, duplicated


@pytest.mark.parametrize("seed", range(20))
def test_duplicates_are_found_whatever_the_slices_the_rows_are_checked_in(seed, monkeypatch):
    rng = np.random.RandomState(seed)
    for _ in range(100):
        X, duplicated = _random_csr(rng)
        monkeypatch.setattr(_validation, "DUPLICATE_CHECK_ENTRIES", rng.randint(1, 8))
        assert has_duplicate_entries(X) == duplicated


def test_a_matrix_with_an_entry_stored_twice_is_replaced_by_its_canonical_copy():
    X = sp.csr_matrix((np.array([1.0, 2.0, 4.0]), np.array([1, 0, 1]), np.array([0, 3])), shape=(1, 2))
    kept = [a.copy() for a in (X.data, X.indices, X.indptr)]
    design = without_duplicate_entries(as_float64_design(X))
    assert design.has_canonical_format and design.nnz == 2
    np.testing.assert_array_equal(design.toarray(), [[2.0, 5.0]])
    for now, then in zip((X.data, X.indices, X.indptr), kept):  # the caller's matrix is left as it was
        np.testing.assert_array_equal(now, then)


def test_unsorted_rows_without_duplicates_are_used_as_they_are():
    """``TfidfVectorizer`` gives unsorted rows: a copy of them would add the size of X to every text fit."""
    docs = ["zebra apple mango", "banana zebra kiwi apple", "mango kiwi lemon"] * 3
    X = TfidfVectorizer().fit_transform(docs)
    assert not X.has_sorted_indices  # what this test is about
    assert without_duplicate_entries(as_float64_design(X)) is X


def test_a_fit_checks_the_users_rows_once_and_forgets_them_when_it_returns(monkeypatch):
    """The safeguard's candidates and folds get the fit's own matrix: they do not sort it again."""
    rng = np.random.RandomState(0)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=rng)
    for i in range(X.shape[0]):  # unsorted rows, as TfidfVectorizer gives them
        a, b = X.indptr[i], X.indptr[i + 1]
        X.indices[a:b], X.data[a:b] = X.indices[a:b][::-1].copy(), X.data[a:b][::-1].copy()
    X.has_sorted_indices = False
    y = np.where(rng.rand(300) < 0.2, (X @ rng.randn(40) > 0).astype(int), -1)
    given, checked = [], []
    monkeypatch.setattr(_base, "without_duplicate_entries", lambda M: given.append(M) or without_duplicate_entries(M))
    monkeypatch.setattr(_validation, "has_duplicate_entries", lambda M: checked.append(M) or False)
    TransductiveSVC().fit(X, y)
    assert sum(M is X for M in given) >= 4  # the fit and the safeguard's candidates (three at least)
    assert sum(M is X for M in checked) == 1
    assert _validation._CHECKED_ROWS.get() is None  # nothing of the fit is left in this thread's context
