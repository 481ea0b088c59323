"""Fits in overlapping threads: bitwise repeatable, and no process state left behind.

Two fits are forced to overlap in the order A enters, B enters, A leaves, B
leaves: B starts only once A is training, both wait for each other at every
batch (so their draws interleave), and B's fit does not return before A's has.
Each must equal the same fit run alone, and torch's global generator, numpy's
global state and torch's thread count (of the caller, of the threads that
fitted, and the default of new threads) must be as they were before.
"""

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from skorch.callbacks import Callback  # noqa: E402
from torch import nn  # noqa: E402

from skssl.deep import (  # noqa: E402
    AdshClassifier,
    FixMatchClassifier,
    FreeMatchClassifier,
    GaussianNoise,
    MLPModule,
    RandAugment,
    RandomShift,
    SmallCNN,
    SupervisedNetClassifier,
)
from skssl.deep._threads import torch_threads  # noqa: E402

from ._data import FAST, FAST_IMG, blobs  # noqa: E402

TIMEOUT = 120  # seconds; a broken ordering fails the test instead of hanging it


def _images(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1, 8, 8)).astype(np.float32)
    y = np.full(n, -1)
    y[:8] = np.arange(8) % 2
    X[y == 1] += 1.0
    return X, y


def _problem(kind):
    if kind == "images":
        return _images()
    X, _, y_semi = blobs()
    return X, y_semi


def _make(Est, kind, **kwargs):
    fast = dict(FAST_IMG if kind == "images" else FAST)
    if Est is SupervisedNetClassifier:
        fast.pop("mu")
        fast["augment"] = "weak"  # so that the supervised fit draws augmentations too
    return Est(**fast, **kwargs)


def _weights(est):
    modules = [est.module_]
    if getattr(est, "ema_state_", None) is not None:
        modules.append(est.ema_state_.module)
    return [t.detach().clone() for m in modules for t in m.state_dict().values()]


def _assert_same_net(a, b, X):
    wa, wb = _weights(a), _weights(b)
    assert len(wa) == len(wb)
    for x, y in zip(wa, wb):
        assert torch.equal(x, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.transduction_, b.transduction_)


def _fresh_thread_count():
    """The intra-op thread count a new thread starts with (the process's default)."""
    out = []
    t = threading.Thread(target=lambda: out.append(torch.get_num_threads()))
    t.start()
    t.join()
    return out[0]


class _Step(Callback):
    """Orders two fits (see the module docstring) and records each batch's thread count."""

    def __init__(self, name, sync):
        self.name = name
        self.sync = sync

    def on_train_begin(self, net, **kwargs):
        self.sync.log(f"{self.name}-enter")
        if self.name == "A":
            self.sync.a_inside.set()

    def on_batch_end(self, net, **kwargs):
        net.history.record_batch("threads", torch.get_num_threads())
        self.sync.batch.wait()

    def on_train_end(self, net, **kwargs):
        if self.name == "B":
            assert self.sync.a_left.wait(TIMEOUT), "fit A did not leave"


class _Sync:
    def __init__(self):
        self.batch = threading.Barrier(2, timeout=TIMEOUT)
        self.done = threading.Barrier(2, timeout=TIMEOUT)
        self.a_inside, self.a_left = threading.Event(), threading.Event()
        self.order, self._lock = [], threading.Lock()

    def log(self, event):
        with self._lock:
            self.order.append(event)

    def abort(self):
        self.batch.abort()
        self.done.abort()
        self.a_inside.set()
        self.a_left.set()


def _overlapped(est_a, est_b, X, y, a_in_main=False):
    """Fit ``est_a`` and ``est_b`` in the order A enters, B enters, A leaves, B leaves.

    Returns, for "A" and "B", the thread count of the thread that fitted it,
    read once both fits have ended.
    """
    sync = _Sync()
    est_a.set_params(callbacks=[("step", _Step("A", sync))])
    est_b.set_params(callbacks=[("step", _Step("B", sync))])
    counts, errors = {}, []

    def run(name, est):
        try:
            if name == "B":
                assert sync.a_inside.wait(TIMEOUT), "fit A did not start"
            est.fit(X, y)
            sync.log(f"{name}-leave")
            if name == "A":
                sync.a_left.set()
            sync.done.wait()
            counts[name] = torch.get_num_threads()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)
            sync.abort()

    threads = [threading.Thread(target=run, args=("B", est_b))]
    if not a_in_main:
        threads.append(threading.Thread(target=run, args=("A", est_a)))
    for t in threads:
        t.start()
    if a_in_main:
        run("A", est_a)
    for t in threads:
        t.join(2 * TIMEOUT)
    if errors:
        raise errors[0]
    assert sync.order == ["A-enter", "B-enter", "A-leave", "B-leave"]
    return counts


@pytest.fixture
def three_threads():
    """Run the test with the process at 3 intra-op threads, so that both n_jobs=1 and 2 change it."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        yield 3
    finally:
        torch.set_num_threads(before)


CASES = [
    (FixMatchClassifier, "vectors"),
    (FreeMatchClassifier, "images"),
    (AdshClassifier, "vectors"),
    (SupervisedNetClassifier, "images"),
]


@pytest.mark.parametrize(("Est", "kind"), CASES)
def test_overlapping_fits_equal_their_fits_alone_and_leave_no_state(Est, kind, three_threads):
    X, y = _problem(kind)
    alone_a = _make(Est, kind, random_state=0, n_jobs=1).fit(X, y)
    alone_b = _make(Est, kind, random_state=1, n_jobs=2).fit(X, y)
    torch.manual_seed(1234)
    np.random.seed(1234)
    rng_before, np_before = torch.get_rng_state(), np.random.get_state()[1].copy()

    a = _make(Est, kind, random_state=0, n_jobs=1)
    b = _make(Est, kind, random_state=1, n_jobs=2)
    counts = _overlapped(a, b, X, y)

    # the caller's random streams and thread counts are as they were
    assert torch.equal(torch.get_rng_state(), rng_before)
    np.testing.assert_array_equal(np.random.get_state()[1], np_before)
    assert torch.get_num_threads() == three_threads
    assert _fresh_thread_count() == three_threads
    assert counts == {"A": three_threads, "B": three_threads}
    # each fit ran with its own n_jobs although the other had another
    assert {r["threads"] for r in a.history[-1]["batches"]} == {1}
    assert {r["threads"] for r in b.history[-1]["batches"]} == {2}
    # and trained exactly the net it trains alone
    _assert_same_net(a, alone_a, X)
    _assert_same_net(b, alone_b, X)


def test_two_overlapping_fits_with_the_same_random_state_are_identical():
    X, y = _problem("vectors")
    alone = _make(FreeMatchClassifier, "vectors", random_state=7).fit(X, y)
    a = _make(FreeMatchClassifier, "vectors", random_state=7)
    b = _make(FreeMatchClassifier, "vectors", random_state=7)
    _overlapped(a, b, X, y)
    _assert_same_net(a, b, X)
    _assert_same_net(a, alone, X)


@pytest.mark.parametrize("overlapped", [False, True], ids=["alone", "overlapped"])
def test_a_fit_in_the_main_thread_leaves_the_global_generators_alone(overlapped):
    X, y = _problem("images")
    torch.manual_seed(5)
    expected = torch.rand(1)
    torch.manual_seed(5)
    np.random.seed(5)
    rng_before, np_before = torch.get_rng_state(), np.random.get_state()[1].copy()
    a = _make(FixMatchClassifier, "images", random_state=0)
    if overlapped:
        _overlapped(a, _make(FixMatchClassifier, "images", random_state=1), X, y, a_in_main=True)
    else:
        a.fit(X, y)
    a.predict_proba(X)
    assert torch.equal(torch.get_rng_state(), rng_before)
    np.testing.assert_array_equal(np.random.get_state()[1], np_before)
    assert torch.equal(torch.rand(1), expected)


def test_same_random_state_gives_the_same_net_and_another_a_different_one():
    X, y = _problem("images")
    a = _make(FreeMatchClassifier, "images", random_state=3).fit(X, y)
    b = _make(FreeMatchClassifier, "images", random_state=3).fit(X, y)
    _assert_same_net(a, b, X)
    c = _make(FreeMatchClassifier, "images", random_state=4).fit(X, y)
    assert not all(torch.equal(x, z) for x, z in zip(_weights(a), _weights(c)))


# --- user modules and augmentations that can only draw from the global generator -----------
class _DropoutNet(nn.Module):
    def __init__(self, input_dim=2, n_classes=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_dim, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, n_classes))

    def forward(self, X):
        return self.net(X)


def _global_noise(X):
    """An augmentation without a ``generator`` parameter: it draws from torch's global generator."""
    return X + 0.1 * torch.randn_like(X)


def test_user_module_and_augmentation_drawing_globally_are_repeatable_in_threads():
    X, y = _problem("vectors")
    params = dict(FAST, module=_DropoutNet, weak_augment=_global_noise, strong_augment=_global_noise)
    params.pop("module__hidden_units")
    alone = [FixMatchClassifier(random_state=s, **params).fit(X, y) for s in (0, 1)]
    torch.manual_seed(99)
    rng_before = torch.get_rng_state()
    a, b = (FixMatchClassifier(random_state=s, **params) for s in (0, 1))
    _overlapped(a, b, X, y)
    assert torch.equal(torch.get_rng_state(), rng_before)
    _assert_same_net(a, alone[0], X)
    _assert_same_net(b, alone[1], X)


# --- the pieces ---------------------------------------------------------------------------
@pytest.mark.parametrize(("cls", "args"), [(MLPModule, (5, 3)), (SmallCNN, (2, 4))])
def test_default_modules_reset_from_a_generator_as_torch_initialises_them(cls, args):
    torch.manual_seed(11)
    expected = cls(*args)
    module = cls(*args)
    state = torch.get_rng_state()
    assert module.reset_parameters(generator=torch.Generator().manual_seed(11)) is module
    assert torch.equal(torch.get_rng_state(), state)
    for (name, x), y in zip(expected.state_dict().items(), module.state_dict().values()):
        assert torch.equal(x, y) and x.stride() == y.stride(), name


@pytest.mark.parametrize(
    ("aug", "shape"),
    [(GaussianNoise(0.3, 0.2), (16, 5)), (RandomShift(flip=True), (6, 2, 9, 9)), (RandAugment(), (6, 2, 9, 9))],
)
def test_augmentations_draw_from_the_generator_given(aug, shape):
    X = torch.rand(*shape, generator=torch.Generator().manual_seed(0))
    state = torch.get_rng_state()
    a = aug(X, generator=torch.Generator().manual_seed(3))
    b = aug(X, generator=torch.Generator().manual_seed(3))
    c = aug(X, generator=torch.Generator().manual_seed(4))
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_thread_guard_restores_the_process_count_after_overlapping_entries(three_threads):
    """A enters (1 thread), B enters (2 threads), A leaves, B leaves: nothing is left changed."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen, errors = {}, []

    def run(name, n, wait_for, signal, hold=None):
        try:
            assert wait_for is None or wait_for.wait(TIMEOUT)
            with torch_threads(n):
                signal.set()
                if hold is not None:
                    assert hold.wait(TIMEOUT)
                seen[name] = torch.get_num_threads()
            seen[name + "_after"] = torch.get_num_threads()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)
            for e in (a_in, b_in, a_out):
                e.set()

    ta = threading.Thread(target=run, args=("A", 1, None, a_in, b_in))
    tb = threading.Thread(target=run, args=("B", 2, a_in, b_in, a_out))
    ta.start()
    tb.start()
    ta.join(TIMEOUT)
    a_out.set()
    tb.join(TIMEOUT)
    assert not errors, errors
    assert seen == {"A": 1, "B": 2, "A_after": three_threads, "B_after": three_threads}
    assert torch.get_num_threads() == three_threads
    assert _fresh_thread_count() == three_threads


def test_random_state_none_follows_numpys_global_seed():
    # the documented choice: None draws the fit's seed from numpy's global RandomState
    X, y = _problem("vectors")
    np.random.seed(0)
    a = _make(FixMatchClassifier, "vectors").fit(X, y)
    np.random.seed(0)
    b = _make(FixMatchClassifier, "vectors").fit(X, y)
    _assert_same_net(a, b, X)
