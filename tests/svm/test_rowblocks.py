"""Row-block products in threads (n_jobs) against the plain products."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC, _mfn, _rowblocks
from skssl.svm._kernels import COMPILED
from skssl.svm._rowblocks import RowBlocks, gram_product, row_blocks, share_threads, transposed


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
    v, z = rng.randn(37), rng.randn(101)
    with ThreadPoolExecutor(2) as ex:
        A = RowBlocks(X, ex, n_blocks)
        if sparse:  # bitwise: scipy sums each row the same way in a block
            np.testing.assert_array_equal(A @ v, X @ v)
        else:  # BLAS may order a row's sum differently for another block size
            np.testing.assert_allclose(A @ v, X @ v, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(A.T @ z, X.T @ z, rtol=1e-13, atol=1e-13)
        assert A.shape == X.shape and A.T.shape == X.shape[::-1]
    if sparse:  # blocks share X's data: no copy
        assert all(np.shares_memory(blk.data, X.data) for blk in A._blocks if blk.nnz)


def test_the_fused_kernel_is_compiled():
    assert COMPILED, (
        "skssl/svm/_csr_kernels.pyx is not built: run `pip install -e .` (or `python setup.py build_ext --inplace`)"
    )


def _gram_reference(X, p, pb, p_norm, cost):
    q = (X @ p + pb) / p_norm
    return q, X.T @ (cost * q), (cost * q).sum(), q @ (cost * q)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("layout", ["csr", "dense", "blocks2", "blocks3", "dense_blocks"])
@pytest.mark.parametrize("seed", range(4))
def test_gram_product_equals_two_products(index_dtype, layout, seed):
    rng = np.random.RandomState(seed)
    n, d = rng.randint(1, 120), rng.randint(1, 40)
    X = sp.random(n, d, density=rng.uniform(0.01, 0.5), format="csr", random_state=rng)
    X.data = rng.randn(X.nnz) * 10.0 ** rng.randint(-3, 4)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    p, pb, p_norm = rng.randn(d), rng.randn(), rng.uniform(0.1, 10)
    cost = rng.exponential(size=n) * (rng.rand(n) < 0.7)  # some zero costs: skipped rows
    expected = _gram_reference(X, p, pb, p_norm, cost)
    with ThreadPoolExecutor(2) as ex:
        if layout == "csr":
            A = X
        elif layout == "dense":
            A = X.toarray()
        elif layout == "dense_blocks":
            A = RowBlocks(X.toarray(), ex, 2) if n >= 2 else X.toarray()
        else:
            A = RowBlocks(X, ex, int(layout[-1])) if n >= int(layout[-1]) else X
        q, u, cq_sum, qcq = gram_product(A, p, pb, p_norm, cost)
    if layout in ("csr", "blocks2", "blocks3"):  # each row summed as scipy sums it
        np.testing.assert_array_equal(q, expected[0])
    else:
        np.testing.assert_allclose(q, expected[0], rtol=1e-12, atol=1e-12 * np.abs(expected[0]).max(initial=1))
    scale = np.abs(X).T @ np.abs(cost * q) + 1e-300
    np.testing.assert_allclose(u, expected[1], rtol=0, atol=1e-13 * scale.max())
    np.testing.assert_allclose([cq_sum, qcq], expected[2:], rtol=1e-12, atol=1e-300)


def test_gram_product_accepts_read_only_inputs_and_does_not_modify_them():
    rng = np.random.RandomState(0)
    X = sp.random(60, 20, density=0.3, format="csr", random_state=rng)
    p, cost = rng.randn(20), rng.rand(60)
    before = [a.copy() for a in (X.data, X.indices, X.indptr, p, cost)]
    for a in (X.data, X.indices, X.indptr, p, cost):  # read-only inputs (memory-mapped data) are accepted
        a.flags.writeable = False
    with ThreadPoolExecutor(2) as ex:
        gram_product(RowBlocks(X, ex, 2), p, 0.5, 2.0, cost)
    gram_product(X, p, 0.5, 2.0, cost)
    for a, b in zip((X.data, X.indices, X.indptr, p, cost), before):
        np.testing.assert_array_equal(a, b)


def test_small_matrices_are_not_blocked():
    X = sp.random(50, 10, density=0.3, format="csr", random_state=0)
    with ThreadPoolExecutor(2) as ex:
        assert row_blocks(X, ex, 2) is X
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
    if _mfn.csr_cgls is None:
        pytest.skip("the compiled kernels are not built")
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


def test_transposed_blocks_share_the_arrays_of_x():
    # scipy's .T copies data and indices that are views of less than half of
    # a larger array, which every row block but a dominant one is.
    X = sp.random(3000, 200, density=0.2, format="csr", random_state=0)
    with ThreadPoolExecutor(3) as executor:
        A = RowBlocks(X, executor, 3)
        for blk_t in A._blocks_t:
            assert np.shares_memory(blk_t.data, X.data) and np.shares_memory(blk_t.indices, X.indices)
        z = np.random.RandomState(0).rand(3000)
        np.testing.assert_allclose(A.T @ z, X.T @ z, rtol=1e-13)
    small = X[:1000]
    view = sp.csr_matrix((10, 200))
    view.indptr = small.indptr[:11].copy()
    view.indices, view.data = small.indices[: small.indptr[10]], small.data[: small.indptr[10]]
    assert np.shares_memory(transposed(view).data, small.data)
    np.testing.assert_array_equal(transposed(view).toarray(), view.toarray().T)


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
    fits = [Est(alpha=1e-2, n_jobs=2).fit(X, y_semi) for _ in range(3)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.coef_, fits[0].coef_)
        np.testing.assert_array_equal(other.intercept_, fits[0].intercept_)


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
def test_the_python_path_of_unbuilt_kernels_fits_the_same_model(monkeypatch, Est):
    # A source tree whose kernels were not compiled runs CGLS in Python on scipy's products, in row blocks on the
    # Python pool with n_jobs=2: the same model as the compiled loop, up to the order of the sums.
    X, y_semi = _blocked_problem(monkeypatch, 2)
    compiled = Est(alpha=1e-2, n_jobs=2).fit(X, y_semi)
    monkeypatch.setattr(_rowblocks, "_fused", lambda X: False)
    monkeypatch.setattr(_mfn, "kernel_rows", lambda A: None)
    python = Est(alpha=1e-2, n_jobs=2).fit(X, y_semi)
    np.testing.assert_allclose(python.objective_, compiled.objective_, rtol=1e-9)
    np.testing.assert_array_equal(python.predict(X), compiled.predict(X))
