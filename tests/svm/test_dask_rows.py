"""The checks a Dask fit runs on each row block where it lives (no cluster needed)."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm.dask._dask_rows import _check_block
from skssl.utils.estimator_checks import _duplicate_entries


def _corrupt(X, how, rng):
    """A copy of the CSR block ``X`` whose stored structure is broken in the way ``how`` names."""
    X = X.copy()
    if how == "column past the end":
        X.indices[rng.randint(X.nnz)] = X.shape[1] + rng.randint(1, 1000)
    elif how == "negative column":
        X.indices[rng.randint(X.nnz)] = -rng.randint(1, 1000)
    elif how == "indptr decreasing":
        row = rng.randint(1, X.shape[0])
        X.indptr[row] = X.indptr[row + 1] + 1
    elif how == "indptr past the entries":
        X.indptr[-1] = X.nnz + rng.randint(1, 1000)
    return X


@pytest.mark.parametrize(
    "how", ["column past the end", "negative column", "indptr decreasing", "indptr past the entries"]
)
def test_a_block_with_a_broken_structure_is_refused_before_any_product(how):
    # Over many random blocks: the block's check raises a ValueError naming the block, and never reaches
    # scipy's compiled conversion or products with the broken indices.
    rng = np.random.RandomState(0)
    for trial in range(40):
        n, d = rng.randint(3, 40), rng.randint(2, 30)
        X = sp.random(n, d, density=0.3, format="csr", random_state=rng)
        if X.nnz == 0:
            continue
        y = np.where(rng.rand(n) < 0.5, rng.randint(0, 2, n), -1)
        with pytest.raises(ValueError, match=f"block {trial} of X"):
            _check_block(_corrupt(X, how, rng), y, None, trial)


def test_a_sound_sparse_block_stays_sparse():
    X = sp.random(20, 10, density=0.3, format="csr", random_state=0)
    y = np.r_[0, 1, [-1] * 18]
    checked = _check_block(X, y, None, 0)
    assert sp.issparse(checked.X)
    np.testing.assert_array_equal(checked.X.toarray(), X.toarray())


def test_a_block_with_entries_stored_twice_is_read_as_their_sums():
    # scipy reads a (row, column) stored twice as the sum of the two; the block's checks and statistics and the
    # solvers read its canonical copy, and the caller's block stays as it was.
    rng = np.random.RandomState(0)
    for trial in range(20):
        X = sp.random(rng.randint(3, 40), rng.randint(2, 30), density=0.3, format="csr", random_state=rng)
        doubled = _duplicate_entries(X, random_state=rng)
        kept = doubled.data.copy()
        y = np.where(rng.rand(X.shape[0]) < 0.5, rng.randint(0, 2, X.shape[0]), -1)
        checked, reference = _check_block(doubled, y, None, trial), _check_block(X, y, None, trial)
        assert checked.X.has_canonical_format
        np.testing.assert_array_equal(checked.X.toarray(), X.toarray())
        assert checked.reply.squares_kept == reference.reply.squares_kept
        np.testing.assert_array_equal(doubled.data, kept)


def test_the_scale_check_reads_the_sums_of_entries_stored_twice():
    def stored_twice(a, b):
        return sp.csr_matrix((np.array([a, b, 1.0]), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))

    y = np.array([0, 1])
    _check_block(stored_twice(4e15, 1.0 - 4e15), y, None, 0)  # the value is 1
    with pytest.raises(ValueError, match="above 1e"):
        _check_block(stored_twice(6e14, 6e14), y, None, 0)  # the value is 1.2e15


def test_a_block_that_travelled_is_transposed_without_a_copy():
    # A block moved between Dask workers arrives with its arrays as views into the message's byte buffer;
    # scipy's X.T would copy them at every CGLS iteration. The check leaves arrays that X.T shares.
    rng = np.random.RandomState(0)
    for trial in range(20):
        X = sp.random(rng.randint(5, 60), rng.randint(2, 40), density=0.3, format="csr", random_state=rng)
        pad = bytes(8 * rng.randint(0, 4))
        frames = [np.frombuffer(a.tobytes() + pad, dtype=np.uint8) for a in (X.data, X.indices)]
        travelled = sp.csr_matrix(X.shape)
        travelled.data = frames[0][: X.data.nbytes].view(np.float64)
        travelled.indices = frames[1][: X.indices.nbytes].view(X.indices.dtype)
        travelled.indptr = X.indptr.copy()
        if X.nnz:
            assert not np.shares_memory(travelled.T.data, travelled.data)  # the copy this guards against
        checked = _check_block(travelled, np.r_[0, 1, [-1] * (X.shape[0] - 2)], None, trial).X
        transposed = checked.T
        assert np.shares_memory(transposed.data, checked.data) or X.nnz == 0
        assert np.shares_memory(transposed.indices, checked.indices) or X.nnz == 0
        np.testing.assert_array_equal(checked.toarray(), X.toarray())
    X = sp.random(30, 8, density=0.3, format="csr", random_state=0)
    assert _check_block(X, np.r_[0, 1, [-1] * 28], None, 0).X.data is X.data  # a block that stayed is not copied


class _RefusingActor:
    """An actor handle whose worker the scheduler already knows is gone: it refuses the call itself."""

    class _Future:
        status = "error"

    _future = _Future()

    def call(self, *args):
        raise RuntimeError("Worker holding Actor was lost.  Status: error")


class _PendingState:
    block = 0

    def pending(self):
        return [], []


def test_an_actor_refused_for_a_lost_worker_is_a_lost_block():
    # Which error a lost worker gives depends on when the scheduler notices; both must restart the fit.
    from collections import deque

    from skssl.svm.dask._dask_rows import BlockLost, DaskRows

    rows = DaskRows.__new__(DaskRows)
    rows._actors, rows._forget, rows.block_rows, rows.n_rounds = [_RefusingActor()], [deque()], [(0, 0, 20)], 0
    with pytest.raises(BlockLost, match="row block 0 \\(rows 0-19\\) was lost while running probe"):
        rows._call([_PendingState()], [None], "probe")
    _RefusingActor._Future.status = "finished"  # a live actor's RuntimeError is a real error, not a lost block
    try:
        with pytest.raises(RuntimeError, match="Worker holding Actor") as raised:
            rows._call([_PendingState()], [None], "probe")
        assert not isinstance(raised.value, BlockLost)
    finally:
        _RefusingActor._Future.status = "error"


def test_a_block_of_values_too_small_to_square_is_refused():
    y = np.array([0, 1, -1])
    for X in (np.array([[1e-200, 0.0], [0.0, -3e-170], [0.0, 0.0]]), sp.csr_matrix(([2e-160], ([0], [1])), (3, 2))):
        with pytest.raises(ValueError, match="Block 4 of X has no value above .*underflow"):
            _check_block(X, y, None, 4)
    _check_block(np.zeros((3, 2)), y, None, 4)  # all-zero rows are rows, not a scale problem
    _check_block(np.array([[2e-154, 0.0], [0.0, 0.0], [1.0, 0.0]]), y, None, 4)
