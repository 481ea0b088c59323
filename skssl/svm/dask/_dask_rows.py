"""The row-block store of a fit on a Dask cluster: blocks of rows and their per-row state stay on the workers.

:class:`DaskRows` persists the row blocks of ``X`` (with the matching blocks
of ``y`` and ``sample_weight``), checks them where they are, hands each to a
:class:`BlockActor` (a Dask actor) on its worker, and runs the solvers'
per-block steps there (:meth:`DaskRows.round`): a step takes a block's state
and a few feature-length vectors and scalars, makes the block's next state
on the same worker and a small reply that the client sums in block order.
Steps are sent lazily with the next round trip (:meth:`DaskRows.submit`),
states are forgotten with their :class:`StateRef` handles, and a lost worker
(:class:`BlockLost`) restarts the fit, at most ``MAX_RESTARTS`` times.

Design decisions: user guide, Implementation decisions: linear S3VMs, "Dask fits".
"""

import collections
import itertools
import weakref

import numpy as np
import scipy.sparse as sp

from ...utils._dask import is_dask_array
from ...utils.validation import check_sparse_structure
from ..defaults._regularization import weighted_column_sum
from ..kernels._validation import MAX_ABS_VALUE, MIN_ABS_VALUE, without_duplicate_entries

__all__ = ["BlockActor", "BlockLost", "BlockStats", "CheckedBlock", "DaskRows", "StateRef", "dask_client"]


def _lost_worker_errors():
    """The exceptions an actor's call raises when its worker is gone (the comm closed or refused)."""
    from distributed.comm.core import CommClosedError

    return (CommClosedError, OSError, ConnectionError)


def _actor_lost(actor):
    """Whether an actor's handle refuses calls because its worker is gone (its future no longer live).

    ``distributed`` raises a plain ``RuntimeError`` then, before any call is sent, where a call already in
    flight fails with one of :func:`_lost_worker_errors`; which one a fit sees depends on when the
    scheduler notices the loss.
    """
    future = getattr(actor, "_future", None)
    return future is not None and future.status not in ("finished", "pending")


def dask_client():
    """The current ``distributed.Client``; a ``ValueError`` that says how to start one if there is none."""
    try:
        from distributed import get_client
    except ImportError as exc:  # pragma: no cover - dask without distributed
        raise ValueError(
            "Fitting on a Dask array needs dask.distributed (pip install 'skssl[scale]') and a running Client."
        ) from exc
    try:
        return get_client()
    except ValueError as exc:
        raise ValueError(
            "Fitting on a Dask array runs on the cluster of the current distributed.Client; none is running. "
            "Start one first, e.g. `from distributed import Client; client = Client()`."
        ) from exc


class BlockStats:
    """The sums of the check round over one block (see :func:`_check_block`).

    ``labels`` are the distinct labels of the labeled rows, with their
    ``counts``, ``weights`` and ``positive`` (rows of positive weight); then the
    numbers of labeled and unlabeled rows, their weight sums, their weighted
    sums of squared norms (``norms_*``) and of rows (``columns_*``, for the
    centring test), the unweighted squared norms of the labeled and of all kept
    rows (``squares_*``, for :data:`skssl.svm.solvers._mfn.CG_ROUNDING_FLOOR`), and
    ``all_unit`` (every positive weight is 1).
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)


def _owned(a):
    """``a``, or a copy of it when it is a view into a buffer more than twice its size (scipy's prune rule)."""
    return a.copy() if a.base is not None and a.size < a.base.size // 2 else a


def _as_block(X):
    if sp.issparse(X):
        X = X.tocsr()
        X = without_duplicate_entries(X if X.dtype == np.float64 else X.astype(np.float64))
        # A block that travelled between workers arrives with its arrays as views into the message's bytes.
        # scipy's X.T (the CGLS step's X^T (C q)) copies such arrays at every call, in its prune step: a copy
        # of the block per CGLS iteration. Copied once here instead.
        data, indices = _owned(X.data), _owned(X.indices)
        if data is not X.data or indices is not X.indices:
            X = sp.csr_matrix((data, indices, _owned(X.indptr)), shape=X.shape)
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


class CheckedBlock:
    """A checked block on its worker: ``X`` (float64 CSR or C-contiguous ndarray), ``y``, ``sw``, ``reply`` (stats)."""

    def __init__(self, X, y, sw, reply):
        self.X, self.y, self.sw, self.reply = X, y, sw, reply


def _check_block(X, y, sw, index):
    """Validate one block of rows, its labels and weights; return it as a :class:`CheckedBlock`."""
    if X.ndim != 2:
        raise ValueError(f"Block {index} of X has {X.ndim} dimension(s); expected rows of a 2-D array.")
    if X.dtype.kind not in "biuf":  # a cast to float64 would drop an imaginary part, or fail on objects
        raise ValueError(
            f"Block {index} of X has dtype {X.dtype}; X must hold real numbers (complex data is not supported)."
        )
    # scipy's compiled conversions and products on the worker trust a sparse block's indices, as skssl's
    # kernels do in memory: its structure is checked first, as fit checks an in-memory X.
    X = _as_block(check_sparse_structure(X, input_name=f"block {index} of X"))
    values = X.data if sp.issparse(X) else X
    if values.size and not np.isfinite(values).all():
        raise ValueError(f"Block {index} of X contains NaN or infinity.")
    top = float(np.abs(values).max()) if values.size else 0.0
    if top > MAX_ABS_VALUE:
        raise ValueError(
            f"Block {index} of X has values above {MAX_ABS_VALUE:.0e} in absolute value; the l2-SVM problem "
            "cannot be solved in float64. Please scale X first (e.g. with dask-ml's or scikit-learn's MaxAbsScaler)."
        )
    if 0.0 < top < MIN_ABS_VALUE:  # (per block: see skssl.svm.kernels._validation's decision on scale)
        raise ValueError(
            f"Block {index} of X has no value above {MIN_ABS_VALUE:.2g} in absolute value (the largest is {top:.3g}); "
            "their squares underflow in float64. Please scale X first (e.g. with dask-ml's or scikit-learn's "
            "MaxAbsScaler)."
        )
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d; block {index} has shape {y.shape}.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Block {index}: X has {X.shape[0]} rows but y has {y.shape[0]}.")
    if y.dtype.kind not in "iuf":
        raise ValueError(f"A Dask y must hold numeric labels (-1 for unlabeled rows); got dtype {y.dtype}.")
    if y.dtype.kind == "f" and y.size and not np.isfinite(y).all():
        raise ValueError(f"Block {index} of y contains NaN or infinity.")
    if sw is None:
        sw = np.ones(X.shape[0])
    else:
        sw = np.asarray(sw, dtype=np.float64)
        if sw.shape != (X.shape[0],):
            raise ValueError(f"Block {index}: sample_weight has shape {sw.shape}, expected ({X.shape[0]},).")
        if sw.size and not (np.isfinite(sw).all() and (sw >= 0).all()):
            raise ValueError(f"Block {index} of sample_weight has negative or non-finite values.")
    labeled = y != -1
    norms = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    labels, inverse = np.unique(y[labeled], return_inverse=True)
    inverse = inverse.ravel()
    positive = sw > 0
    stats = BlockStats(
        n_rows=X.shape[0],
        labels=labels,
        counts=np.bincount(inverse, minlength=labels.size),
        weights=np.bincount(inverse, weights=sw[labeled], minlength=labels.size),
        positive=np.bincount(inverse, weights=positive[labeled], minlength=labels.size),
        n_labeled=int(np.count_nonzero(labeled & positive)),
        n_unlabeled=int(np.count_nonzero(~labeled & positive)),
        sw_labeled=float(sw[labeled].sum()),
        sw_unlabeled=float(sw[~labeled].sum()),
        norms_labeled=float(np.dot(sw[labeled], norms[labeled])),
        norms_unlabeled=float(np.dot(sw[~labeled], norms[~labeled])),
        squares_labeled=float(norms[labeled & positive].sum()),
        squares_kept=float(norms[positive].sum()),
        columns_labeled=weighted_column_sum(X, np.where(labeled, sw, 0.0)),
        columns_unlabeled=weighted_column_sum(X, np.where(labeled, 0.0, sw)),
        all_unit=bool(np.all(sw[positive] == 1.0)),
    )
    return CheckedBlock(X, y, sw, stats)


def _rechecked(block, func, args, index):
    y, sw = func(block, *args)
    return _check_block(block.X, y, sw, index)


def _reply_of(state):
    return state.reply


def _as_row_chunked(X, name):
    """``X`` with its columns in one chunk (a row needs all of its features), its row chunks kept."""
    if X.ndim != 2:
        raise ValueError(f"Expected {name} as a 2-D Dask array of rows, got {X.ndim} dimension(s).")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first.")
    return X.rechunk({1: -1}) if len(X.chunks[1]) > 1 else X


def _rows_like(a, X, name):
    """``a`` (Dask or in-memory) as a 1-D Dask array with ``X``'s row chunks; a ``ValueError`` if they differ."""
    import dask.array as da

    if a is None:
        return None
    if not is_dask_array(a):
        a = np.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-d; got shape {a.shape}.")
        if a.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but {name} has {a.shape[0]}.")
        return da.from_array(a, chunks=(X.chunks[0],))
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-d; got a Dask array of shape {a.shape}.")
    if tuple(a.chunks[0]) != tuple(X.chunks[0]):
        raise ValueError(
            f"The row chunks of {name} {a.chunks[0]} differ from those of X {X.chunks[0]}; rechunk {name} "
            f"to X's rows, e.g. {name}.rechunk(X.chunks[0])."
        )
    return a


class BlockLost(RuntimeError):
    """The worker holding some row blocks' states was lost; the fit restarts from the blocks."""

    def __init__(self, message, blocks):
        super().__init__(message)
        self.blocks = blocks


#: The id of a block's checked rows among its actor's states.
_BLOCK = 0


class BlockActor:
    """The states of one row block, on the worker that holds the block (a Dask actor).

    States are kept by id: the checked block itself (id 0) and the steps' results. :meth:`call` runs
    the steps it is sent in order, then either returns one state's reply or a query's value, and forgets
    the states the client no longer refers to.
    """

    def __init__(self, block):
        self._states = {_BLOCK: block}

    def call(self, steps, forget, final):
        states = self._states
        for func, source, target, args in steps:
            states[target] = func(states[source], *args)
        if final[0] == "reply":
            out = states[final[1]].reply
        else:
            _, func, source, args = final
            out = func(states[source], *args)
        for key in forget:
            states.pop(key, None)
        return out

    def n_states(self):
        """How many states the actor holds (the checked block included)."""
        return len(self._states)


class StateRef:
    """The client's handle on one state of one block: ``step(parent's state, *args)``, run lazily.

    A handle made by :meth:`DaskRows.submit` holds its recipe until a round trip that needs it sends the
    chain of pending steps along (:meth:`DaskRows.round`, :meth:`DaskRows.query`). When the handle is
    garbage collected, its state is forgotten on the worker at the block's next round trip.
    """

    __slots__ = ("block", "id", "recipe", "__weakref__")

    def __init__(self, block, id, recipe=None):
        self.block, self.id, self.recipe = block, id, recipe

    def pending(self):
        """The steps (oldest first) that make this state on its worker, and the handles they involve."""
        steps, refs, ref = [], [], self
        while ref.recipe is not None:
            parent, func, args = ref.recipe
            steps.append((func, parent.id, ref.id, args))
            refs.append(ref)
            ref = parent
        refs.append(ref)
        steps.reverse()
        return steps, refs


def _near(holders, key):
    """``submit``'s placement on a worker that holds ``key`` (from ``who_has``), or none when no holder is known.

    A block whose holder was just lost has none; the scheduler then places the task (distributed refuses
    ``allow_other_workers=`` without ``workers=``).
    """
    near = list(holders.get(key, ()))[:1]
    return dict(workers=near, allow_other_workers=True) if near else {}


class DaskRows:
    """Row blocks of ``X`` with their labels and weights, persisted and checked on the cluster.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Blocks of rows: ``scipy.sparse`` matrices (used as CSR, never
        densified) or ndarrays. Column chunks are joined into one.
    y : dask.array.Array or array-like of shape (n_samples,)
        Numeric labels, -1 for unlabeled rows; a Dask array must have the
        row chunks of ``X``, an in-memory one is split along them.
    sample_weight : dask.array.Array or array-like of shape (n_samples,), default=None
        Non-negative row weights, chunked like ``y``.
    client : distributed.Client, default=None
        The cluster (``None``: the current client).

    Attributes
    ----------
    blocks : list of StateRef
        One checked block per non-empty block, held by a :class:`BlockActor`
        on the worker where it was checked; ``block_rows`` gives each one's
        chunk index, first row and number of rows, ``stats`` its
        :class:`BlockStats`.
    source : tuple
        ``(X, y, sample_weight)`` as Dask arrays with the row chunks of ``X``
        (not persisted); ``sample_weight_given`` says whether weights came.
    n_rounds, bytes_sent, bytes_received : int
        Round trips so far and the bytes of the steps' arguments and replies.
    """

    def __init__(self, X, y, sample_weight=None, client=None):
        self.client = dask_client() if client is None else client
        X = _as_row_chunked(X, "X")
        y = _rows_like(y, X, "y")
        sw = _rows_like(sample_weight, X, "sample_weight")
        self.source = (X, y, sw)
        self.sample_weight_given = sw is not None
        self.n_samples, self.n_features = (int(n) for n in X.shape)
        self.row_chunks = tuple(int(c) for c in X.chunks[0])
        parts = [X, y] if sw is None else [X, y, sw]
        from distributed import futures_of, wait

        persisted = self.client.persist(parts)
        futures = {f.key: f for f in futures_of(persisted)}
        keys = [_flat_keys(part.__dask_keys__()) for part in persisted]
        checked = []
        self.block_rows = []
        offset = 0
        # Each block is checked where its rows are, so that they need not travel (see _as_block).
        x_blocks = [futures[_key(k)] for k in keys[0]]
        wait(x_blocks)
        holders = self.client.who_has(x_blocks)
        for i, n in enumerate(self.row_chunks):
            if n:
                args = [futures[_key(keys[k][i])] for k in range(len(parts))]
                if sw is None:
                    args.append(None)
                placement = _near(holders, args[0].key)
                checked.append(self.client.submit(_check_block, *args, i, pure=False, **placement))
                self.block_rows.append((i, offset, n))
            offset += n
        self._persisted = persisted
        self.n_rounds = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        self._ids = itertools.count(_BLOCK + 1)
        self._forget = [collections.deque() for _ in checked]  # ids of states no handle refers to any more
        self.stats = self._gather([self.client.submit(_reply_of, c, pure=False) for c in checked], "checking")
        # Each checked block gets an actor on the worker that holds it (the check round above has finished):
        # the steps then go from the client to that worker and back, without a scheduler in between.
        where = self.client.who_has(checked)
        self._checked = checked
        actors = [self.client.submit(BlockActor, c, actor=True, pure=False, **_near(where, c.key)) for c in checked]
        self._actors = self._gather(actors, "placing the blocks")
        self.blocks = [StateRef(k, _BLOCK) for k in range(len(checked))]

    @classmethod
    def derived(cls, rows, func, *args):
        """A store on the same blocks with new labels and weights: ``func(block, *args)`` gives each one's.

        ``func`` returns ``(y, sample_weight)`` of a :class:`CheckedBlock`; the blocks are checked again
        where they are (nothing moves).
        """
        new = cls.__new__(cls)
        new.__dict__.update(rows.__dict__)
        new.n_rounds = new.bytes_sent = new.bytes_received = 0
        indices = [i for i, _, _ in rows.block_rows]
        new.blocks = rows.submit(_rechecked, rows.blocks, func, args, each=indices)
        new.stats = rows.query(_reply_of, new.blocks)
        new.sample_weight_given = True
        return new

    def submit(self, func, states, *args, each=None):
        """``func(state, *args[, each[i]])`` on every block's state, run with the next round trip that needs it.

        Returns the new states' handles; nothing is sent yet.
        """
        sent = sum(_nbytes(a) for a in args)
        self.bytes_sent += sent * len(states) + (0 if each is None else sum(_nbytes(e) for e in each))
        out = []
        for k, s in enumerate(states):
            ref = StateRef(s.block, next(self._ids), (s, func, args if each is None else (*args, each[k])))
            weakref.finalize(ref, self._forget[s.block].append, ref.id).atexit = False
            out.append(ref)
        return out

    def round(self, func, states, *args, each=None):
        """One round trip: :meth:`submit`, run the steps, and return the new states and their replies in block order."""
        new = self.submit(func, states, *args, each=each)
        replies = self._call(new, [("reply", s.id) for s in new], func.__name__)
        self.bytes_received += sum(_nbytes(r) for r in replies)
        return new, replies

    def query(self, func, states, *args):
        """One round trip that reads the states without changing them: ``func(state, *args)`` per block, in order."""
        self.bytes_sent += sum(_nbytes(a) for a in args) * len(states)
        replies = self._call(states, [("query", func, s.id, args) for s in states], func.__name__)
        self.bytes_received += sum(_nbytes(r) for r in replies)
        return replies

    def _call(self, states, finals, what):
        """Send each block its pending steps and ``final``; return the answers in block order."""
        calls, held = [], []
        for s, final in zip(states, finals):
            steps, refs = s.pending()
            held.append(refs)  # the handles stay alive (their states remembered) until the answers are in
            forget, gone = [], self._forget[s.block]
            while gone:  # popleft, like the finalizers' append, is atomic: no id is lost to another thread
                forget.append(gone.popleft())
            actor = self._actors[s.block]
            try:
                calls.append(actor.call(steps, forget, final))
            except RuntimeError as error:
                # The scheduler already knows the worker is gone: the handle refuses the call itself.
                if not _actor_lost(actor):
                    raise
                raise self._block_lost(s, what, error) from error
        answers = []
        for s, c in zip(states, calls):
            try:
                answers.append(c.result())
            except _lost_worker_errors() as error:
                raise self._block_lost(s, what, error) from error
        for refs in held:
            for ref in refs:
                ref.recipe = None  # made on its worker: later round trips need not send its step again
        self.n_rounds += 1
        return answers

    def _block_lost(self, state, what, error):
        i, start, n = self.block_rows[state.block]
        return BlockLost(
            f"The worker holding row block {i} (rows {start}-{start + n - 1}) was lost while running "
            f"{what}: {type(error).__name__}: {error}",
            [self.block_rows[state.block]],
        )

    def _gather(self, futures, what, *related):
        """Gather ``futures`` (one per block); a ``RuntimeError`` naming the blocks if Dask gives up on one."""
        from distributed import KilledWorker

        try:
            return self.client.gather(futures)
        except KilledWorker as error:
            # The block whose task Dask gave up on: futures and the related lists are one entry per block.
            where = {f.key: k for group in (futures, *related) for k, f in enumerate(group)}
            lost = [self.block_rows[where[error.task]]] if error.task in where else self.block_rows
            blocks = ", ".join(f"{i} (rows {start}-{start + n - 1})" for i, start, n in lost)
            raise RuntimeError(
                f"The Dask fit lost the state of row block(s) {blocks} while running {what}: {error} Dask could "
                "not recompute it from its lineage, so the fit stops rather than return a different model; "
                "restart the workers and fit again."
            ) from error

    def sums(self, name):
        """The sum of the check round's ``name`` over the blocks."""
        return sum(getattr(s, name) for s in self.stats)


def _key(key):
    return tuple(key) if isinstance(key, list) else key


def _flat_keys(keys):
    """The block keys of a Dask array of rows (nested lists of key tuples), in row-block order."""
    out = []
    for k in keys:
        out.extend(_flat_keys(k) if isinstance(k, list) else [k])
    return out


def _nbytes(value):
    """Approximate bytes of a step's argument or reply (arrays by their buffers, scalars 8)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return sum(_nbytes(v) for v in vars(value).values())
    return 8
