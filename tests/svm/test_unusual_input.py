"""Valid but unusual input (index types, strided arrays) fits the same model; invalid parameters get clear errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.utils.estimator_checks import _duplicate_entries

from .._tiers import fast_first

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

ESTIMATORS = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _problem():
    rng = np.random.RandomState(0)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=rng)
    y = (X @ rng.randn(30) > 0).astype(int)
    return X, np.where(rng.rand(200) < 0.2, y, -1)


def _variants(X):
    """The same matrix with index arrays of other integer types, and with strided (non-contiguous) arrays."""
    for dtype in (np.int16, np.uint32, np.uint64, np.int8):
        if np.iinfo(dtype).max < max(X.shape[1], X.nnz):
            continue
        Y = X.copy()
        Y.indices = Y.indices.astype(dtype)
        yield f"indices {np.dtype(dtype).name}", Y
    for dtype in (np.int64, np.uint32, np.uint64):  # the index arrays' types can differ: scipy keeps them so
        Y = X.copy()
        Y.indptr = Y.indptr.astype(dtype)
        yield f"indptr {np.dtype(dtype).name}, indices {Y.indices.dtype.name}", Y
    for name in ("data", "indices", "indptr"):
        Y = X.copy()
        setattr(Y, name, np.repeat(getattr(Y, name), 2)[::2])
        assert not getattr(Y, name).flags.c_contiguous
        yield f"strided {name}", Y
    # Every entry stored twice: scipy reads the sum, the same values exactly.
    Y = _duplicate_entries(X)
    assert not Y.has_canonical_format
    np.testing.assert_array_equal(Y.toarray(), X.toarray())
    yield "duplicate entries", Y
    # Rows given in reverse column order (as TfidfVectorizer gives rows unsorted): read as they are, so the
    # products sum in another order and the model is the same up to rounding.
    Y = sp.csr_matrix((X.data.copy(), X.indices.copy(), X.indptr.copy()), shape=X.shape)
    for i in range(Y.shape[0]):
        a, b = Y.indptr[i], Y.indptr[i + 1]
        Y.indices[a:b], Y.data[a:b] = Y.indices[a:b][::-1].copy(), Y.data[a:b][::-1].copy()
    Y.has_sorted_indices = False
    yield "unsorted indices", Y


@pytest.mark.parametrize("Est", fast_first(ESTIMATORS, 2))
def test_unusual_but_valid_sparse_input_fits_the_same_model(Est):
    """The same model, with the defaults: ``alpha="auto"``'s check and the safeguard read the rows too.

    Exactly the same, but for unsorted rows: to rounding (their products sum in another order).
    """
    X, y = _problem()
    reference = Est(max_iter=5).fit(X, y)
    for name, Y in _variants(X):
        before = {a: getattr(Y, a).copy() for a in ("data", "indices", "indptr")}
        model = Est(max_iter=5).fit(Y, y)
        if name == "unsorted indices":
            np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-8, atol=1e-10, err_msg=name)
        else:
            np.testing.assert_array_equal(model.coef_, reference.coef_, err_msg=name)
        np.testing.assert_array_equal(model.predict(Y), reference.predict(X), err_msg=name)
        for a, values in before.items():  # the caller's arrays are not changed
            np.testing.assert_array_equal(getattr(Y, a), values, err_msg=name)
            assert getattr(Y, a).dtype == values.dtype


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_n_jobs_zero_is_rejected_before_fitting(Est):
    X, y = _problem()
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        Est(n_jobs=0).fit(X, y)


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC])
def test_positive_fraction_as_a_mapping_gets_a_clear_error(Est):
    X, y = _problem()
    with pytest.raises(ValueError, match="positive_fraction is a dict"):
        Est(positive_fraction={0: 0.4, 1: 0.6}).fit(X, y)


@pytest.mark.parametrize("Est", [DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC])
def test_positive_fraction_that_is_not_numbers_gets_a_clear_error(Est):
    X, y = _problem()
    with pytest.raises(ValueError, match="positive_fraction must hold numbers"):
        Est(positive_fraction=["a", "b"]).fit(X, y)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_the_scale_check_reads_the_sums_of_entries_stored_twice(Est):
    """scipy's value of a (row, column) stored twice is the sum of the two: the check of X's scale reads that."""

    def stored_twice(a, b):
        data = np.array([a, b, 1.0, -1.0, 2.0, 0.5])
        return sp.csr_matrix((data, np.array([0, 0, 1, 0, 1, 1]), np.array([0, 3, 4, 5, 6])), shape=(4, 2))

    y = np.array([0, 1, 0, -1])
    Est(max_iter=5).fit(stored_twice(4e15, 1.0 - 4e15), y)  # the value is 1
    with pytest.raises(ValueError, match="Please scale X"):
        Est(max_iter=5).fit(stored_twice(6e14, 6e14), y)  # the value is 1.2e15
