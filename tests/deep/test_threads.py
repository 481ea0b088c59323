import os

import pytest

torch = pytest.importorskip("torch")

from skssl.deep._threads import resolve_n_threads, torch_threads  # noqa: E402


def test_resolve_n_threads():
    cores = os.cpu_count() or 1
    assert resolve_n_threads(None) is None
    assert resolve_n_threads(3) == 3
    assert resolve_n_threads(-1) == cores
    assert resolve_n_threads(-cores - 5) == 1
    with pytest.raises(ValueError, match="n_jobs == 0"):
        resolve_n_threads(0)


@pytest.mark.parametrize("n_jobs", [1, 2, None])
def test_torch_threads_sets_and_restores(n_jobs):
    before = torch.get_num_threads()
    with torch_threads(n_jobs):
        assert torch.get_num_threads() == (before if n_jobs is None else n_jobs)
    assert torch.get_num_threads() == before


def test_torch_threads_restores_after_an_error():
    before = torch.get_num_threads()
    target = 1 if before != 1 else 2
    with pytest.raises(RuntimeError, match="boom"):
        with torch_threads(target):
            assert torch.get_num_threads() == target
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before


# --- the nets' n_jobs -----------------------------------------------------------------------
pytest.importorskip("skorch")

import numpy as np  # noqa: E402
from sklearn.datasets import make_blobs  # noqa: E402
from skorch.callbacks import Callback  # noqa: E402

from skssl.deep import FreeMatchClassifier, SmallCNN, SupervisedNetClassifier  # noqa: E402

FAST = dict(max_epochs=1, iterations_per_epoch=2, batch_size=8, random_state=0)


class _RecordThreads(Callback):
    def on_batch_end(self, net, **kwargs):
        net.history.record_batch("torch_threads", torch.get_num_threads())


def _blobs():
    X, y = make_blobs(60, centers=3, random_state=0)
    y_semi = np.full(60, -1)
    y_semi[:12] = y[:12]
    return X, y_semi


@pytest.mark.parametrize("Est", [FreeMatchClassifier, SupervisedNetClassifier])
@pytest.mark.parametrize("n_jobs", [1, 2, None])
def test_nets_train_with_n_jobs_threads_and_restore(Est, n_jobs):
    X, y_semi = _blobs()
    if Est is SupervisedNetClassifier:
        X, y_semi = X[y_semi != -1], y_semi[y_semi != -1]
    before = torch.get_num_threads()
    est = Est(n_jobs=n_jobs, callbacks=[("threads", _RecordThreads())], **FAST).fit(X, y_semi)
    seen = {b["torch_threads"] for b in est.history[-1]["batches"]}
    assert seen == {before if n_jobs is None else n_jobs}
    assert torch.get_num_threads() == before
    est.predict_proba(X)
    assert torch.get_num_threads() == before


def test_default_n_jobs_is_one_thread():
    assert FreeMatchClassifier().get_params()["n_jobs"] == 1
    assert SupervisedNetClassifier().get_params()["n_jobs"] == 1


@pytest.mark.parametrize("bad", [0, 1.5, "2"])
def test_bad_n_jobs_raises_by_name(bad):
    X, y_semi = _blobs()
    with pytest.raises(ValueError, match="n_jobs"):
        FreeMatchClassifier(n_jobs=bad, **FAST).fit(X, y_semi)


def test_small_cnn_is_channels_last_and_takes_either_layout():
    torch.manual_seed(0)
    net = SmallCNN(1, 10).eval()
    assert net.features[0].weight.is_contiguous(memory_format=torch.channels_last)
    X = torch.rand(5, 3, 12, 12)
    net3 = SmallCNN(3, 4).eval()
    with torch.no_grad():
        a = net3(X)
        b = net3(X.contiguous(memory_format=torch.channels_last))
    torch.testing.assert_close(a, b)
    kinds = [type(m).__name__ for m in net.features]
    # pooling comes right after each convolution, before BatchNorm and ReLU (module docstring)
    assert kinds == ["Conv2d", "MaxPool2d", "BatchNorm2d", "ReLU"] * 2
