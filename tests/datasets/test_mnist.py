"""MNIST from a local folder or OpenML."""

import urllib.error
from pathlib import Path

import numpy as np
import pytest

from skssl.datasets import DatasetUnavailableError, fetch_mnist
from skssl.datasets import _locate as locate
from skssl.datasets import _mnist

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mnist"


@pytest.fixture
def no_local_data(monkeypatch):
    monkeypatch.delenv(locate.ENV_VAR, raising=False)
    monkeypatch.setattr(locate, "_search_roots", lambda: [])


def _write(folder, n_train=5, n_test=3):
    rng = np.random.RandomState(0)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("test", n_test)):
        np.savez(
            folder / f"mnist_{split}.npz", X=rng.randint(0, 256, (n, 28, 28)).astype(np.uint8), y=np.arange(n) % 10
        )
    return folder


def test_given_folder(tmp_path):
    mnist = fetch_mnist(_write(tmp_path / "mnist"))
    assert mnist.X_train.shape == (5, 28, 28) and mnist.X_train.dtype == np.uint8
    assert mnist.y_test.dtype == np.int64 and mnist.y_test.tolist() == [0, 1, 2]
    with pytest.raises(DatasetUnavailableError, match="lacks"):
        fetch_mnist(tmp_path / "elsewhere")


def test_found_through_the_environment(tmp_path, no_local_data, monkeypatch):
    _write(tmp_path / "mnist")
    monkeypatch.setenv(locate.ENV_VAR, str(tmp_path))
    assert fetch_mnist().source == str(tmp_path / "mnist")


def test_openml_fallback_splits_60000_and_the_rest(no_local_data, monkeypatch):
    from sklearn import datasets

    rng = np.random.RandomState(0)
    X = rng.randint(0, 256, (7, 784)).astype(np.float64)
    y = np.array(list("0123456"), dtype=object)  # OpenML gives string labels
    seen = {}

    def fake_openml(name, **kwargs):
        seen.update(kwargs, name=name)
        return X, y

    monkeypatch.setattr(datasets, "fetch_openml", fake_openml)
    monkeypatch.setattr(_mnist, "_N_TRAIN", 4)
    mnist = fetch_mnist(data_home="somewhere")
    assert seen["name"] == "mnist_784" and seen["version"] == 1 and seen["data_home"] == "somewhere"
    assert mnist.X_train.shape == (4, 28, 28) and mnist.X_test.shape == (3, 28, 28)
    np.testing.assert_array_equal(mnist.X_test.reshape(3, -1), X[4:])
    assert mnist.y_train.tolist() == [0, 1, 2, 3] and mnist.y_test.dtype == np.int64


def test_offline_is_one_line(no_local_data, monkeypatch):
    from sklearn import datasets

    def offline(*args, **kwargs):
        raise urllib.error.URLError("[Errno -2] Name or service not known")

    monkeypatch.setattr(datasets, "fetch_openml", offline)
    with pytest.raises(DatasetUnavailableError, match="MNIST unavailable") as info:
        fetch_mnist()
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_real_local_copy():
    if not DATA.is_dir():
        pytest.skip(f"MNIST not found at {DATA}")
    mnist = fetch_mnist(DATA)
    assert mnist.X_train.shape == (60000, 28, 28) and mnist.X_test.shape == (10000, 28, 28)
    assert sorted(np.unique(mnist.y_train)) == list(range(10))
