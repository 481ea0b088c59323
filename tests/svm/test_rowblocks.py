"""Row-block products on the kernels' threads (n_jobs) against the plain products."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm.kernels import _rowblocks
from skssl.svm.solvers import _mfn
from skssl.svm.kernels._kernels import csr_cgls
from skssl.svm.kernels._rowblocks import RowBlocks, fit_threads, row_blocks, share_threads

from .._tiers import fast_first
from ._oracle import cgls as oracle_cgls
from ._oracle import gram_product


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n_blocks", [2, 3, 7])
def test_row_block_products_equal_the_plain_ones(sparse, n_blocks):
    rng = np.random.RandomState(n_blocks)
    X = sp.random(101, 37, density=0.2, format="csr", random_state=rng)
    X.data = rng.randn(X.nnz)
    X.data[X.indptr[5] : X.indptr[6]] = 0  # an empty row
    X.eliminate_zeros()
    if not sparse:
        X = X.toarray()
    v = rng.randn(37)
    A = RowBlocks(X, n_blocks)
    if sparse:  # bitwise: scipy sums each row the same way in a block
        np.testing.assert_array_equal(A @ v, X @ v)
    else:  # BLAS may order a row's sum differently for another block size
        np.testing.assert_allclose(A @ v, X @ v, rtol=1e-13, atol=1e-13)
    assert A.shape == X.shape


def test_the_fused_kernel_is_compiled():
    # skssl.svm imports only with the kernels built; no other path exists.
    assert csr_cgls.__module__ == "skssl.svm._csr_kernels"


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("layout", ["csr", "dense", "blocks2", "blocks3", "dense_blocks"])
@pytest.mark.parametrize("seed", range(4))
def test_kernel_row_products_equal_the_plain_ones(index_dtype, layout, seed):
    # X @ p on the kernels (all rows, a block split, or the dense rows) against scipy's / numpy's product.
    rng = np.random.RandomState(seed)
    n, d = rng.randint(1, 120), rng.randint(1, 40)
    X = sp.random(n, d, density=rng.uniform(0.01, 0.5), format="csr", random_state=rng)
    X.data = rng.randn(X.nnz) * 10.0 ** rng.randint(-3, 4)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    p = rng.randn(d)
    if layout == "csr":
        q = _mfn._outputs(X, np.arange(n, dtype=np.intp), p, 0.0, 2)
    elif layout == "dense":
        q = _mfn._outputs(X.toarray(), np.arange(n, dtype=np.intp), p, 0.0, 2)
    elif layout == "dense_blocks":
        q = RowBlocks(X.toarray(), 2) @ p if n >= 2 else X.toarray() @ p
    else:
        q = RowBlocks(X, int(layout[-1])) @ p if n >= int(layout[-1]) else X @ p
    if layout in ("csr", "blocks2", "blocks3"):  # each row summed as scipy sums it
        np.testing.assert_array_equal(q, X @ p)
    else:
        want = X.toarray() @ p
        np.testing.assert_allclose(q, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(initial=1))


def test_the_oracle_gram_product_equals_two_products():
    rng = np.random.RandomState(0)
    X = sp.random(60, 20, density=0.3, format="csr", random_state=rng)
    p, cost = rng.randn(20), rng.exponential(size=60)
    q, u, cq_sum, qcq = gram_product(X, p, 0.5, 2.0, cost)
    np.testing.assert_array_equal(q, (X @ p + 0.5) / 2.0)
    np.testing.assert_allclose(u, X.T @ (cost * q), rtol=1e-13)
    np.testing.assert_allclose([cq_sum, qcq], [(cost * q).sum(), q @ (cost * q)], rtol=1e-13)


def test_the_kernels_accept_read_only_inputs_and_do_not_modify_them():
    rng = np.random.RandomState(0)
    X = sp.random(60, 20, density=0.3, format="csr", random_state=rng)
    p, cost, target = rng.randn(20), rng.rand(60), np.sign(rng.randn(60))
    before = [a.copy() for a in (X.data, X.indices, X.indptr, p, cost, target)]
    for a in (X.data, X.indices, X.indptr, p, cost, target):  # read-only inputs (memory-mapped data) are accepted
        a.flags.writeable = False
    RowBlocks(X, 2) @ p
    bounds = np.array([0, 30, 60], dtype=np.intp)
    csr_cgls(
        X.data, X.indices, X.indptr, bounds, cost, target, np.zeros(60), np.zeros(20), 0.0, 1e-2, 1e-2, 1e-6, 50, 2
    )
    for a, b in zip((X.data, X.indices, X.indptr, p, cost, target), before):
        np.testing.assert_array_equal(a, b)


def test_small_matrices_are_not_blocked():
    X = sp.random(50, 10, density=0.3, format="csr", random_state=0)
    with fit_threads(2) as schedule:
        assert schedule is not None and row_blocks(X, schedule, 2) is X
    assert row_blocks(X, None, 2) is X


@pytest.mark.parametrize(
    ("n_jobs", "n_problems", "expected"), [(1, 1, (1, 1)), (2, 1, (1, 2)), (2, 3, (2, 1)), (4, 2, (2, 2))]
)
def test_cores_shared_between_one_vs_rest_and_row_blocks(n_jobs, n_problems, expected):
    assert share_threads(n_jobs, n_problems) == expected


@pytest.mark.parametrize("Est", [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC])
def test_n_jobs_leaves_the_objective_unchanged(monkeypatch, Est):
    monkeypatch.setattr(_rowblocks, "MIN_BLOCK_NNZ", 100)  # block this small problem
    rng = np.random.RandomState(0)
    X = sp.random(400, 300, density=0.05, format="csr", random_state=rng)
    w = rng.randn(300)
    y = (X @ w > 0).astype(int)
    y_semi = np.where(rng.rand(400) < 0.15, y, -1)
    calls = []
    original = _mfn.csr_cgls

    def spy(data, indices, indptr, bounds, *args):
        calls.append(len(bounds) - 1)
        return original(data, indices, indptr, bounds, *args)

    monkeypatch.setattr(_mfn, "csr_cgls", spy)
    one = Est(alpha=1e-2, n_jobs=1).fit(X, y_semi)
    assert calls and all(n == 1 for n in calls)
    calls.clear()
    two = Est(alpha=1e-2, n_jobs=2).fit(X, y_semi)
    # CGLS ran on two row blocks (small slices of active rows stay whole, see MIN_BLOCK_NNZ)
    assert 2 in calls and set(calls) <= {1, 2}
    np.testing.assert_allclose(two.objective_, one.objective_, rtol=1e-9)
    np.testing.assert_allclose(two.coef_, one.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(two.predict(X), one.predict(X))


def _blocked_problem(monkeypatch, seed):
    """A small semi-supervised problem that n_jobs=2 splits into two row blocks (MIN_BLOCK_NNZ lowered)."""
    monkeypatch.setattr(_rowblocks, "MIN_BLOCK_NNZ", 100)
    rng = np.random.RandomState(seed)
    X = sp.random(600, 400, density=0.05, format="csr", random_state=rng)
    y = (X @ rng.randn(400) > 0).astype(int)
    return X, np.where(rng.rand(600) < 0.12, y, -1)


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
def test_two_thread_fits_are_bitwise_repeatable(monkeypatch, Est):
    # The compiled CGLS adds its per-block partial sums in block order, so the threads' timing cannot change a bit.
    X, y_semi = _blocked_problem(monkeypatch, 1)
    fits = [Est(alpha=1e-2, safeguard=None, n_jobs=2).fit(X, y_semi) for _ in range(3)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.coef_, fits[0].coef_)
        np.testing.assert_array_equal(other.intercept_, fits[0].intercept_)


def _oracle_cgls(XJ, *args):
    # The numpy CGLS of tests/svm/_oracle.py on the plain matrix behind the kernels' rows.
    if isinstance(XJ, _rowblocks.DenseRows):
        XJ = XJ.X[XJ.rows]
    elif isinstance(XJ, RowBlocks):
        XJ = XJ.X
    return oracle_cgls(XJ, *args)


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("Est", fast_first([TransductiveSVC, DeterministicAnnealingSVC]))
def test_fits_on_the_numpy_oracle_cgls_give_the_same_model(monkeypatch, Est, sparse):
    # The compiled CGLS (on two row blocks with n_jobs=2) against the plain numpy loop it replaced, over a whole
    # fit: the same model, up to the order of the sums.
    X, y_semi = _blocked_problem(monkeypatch, 2)
    X = X if sparse else X.toarray()
    compiled = Est(alpha=1e-2, safeguard=None, n_jobs=2).fit(X, y_semi)
    monkeypatch.setattr(_mfn, "cgls", _oracle_cgls)
    oracle = Est(alpha=1e-2, safeguard=None, n_jobs=2).fit(X, y_semi)
    np.testing.assert_allclose(oracle.objective_, compiled.objective_, rtol=1e-9)
    np.testing.assert_array_equal(oracle.predict(X), compiled.predict(X))
