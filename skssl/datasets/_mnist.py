"""MNIST from a local copy, else from OpenML through scikit-learn.

The local copy is the pair ``mnist/mnist_train.npz`` and ``mnist/mnist_test.npz``
(keys ``X``: uint8 images of shape (n, 28, 28), ``y``: labels) in a data folder
(see :func:`~skssl.datasets._locate.find_data_file`). Without it,
:func:`sklearn.datasets.fetch_openml` gives OpenML's ``mnist_784`` (version 1),
whose first 60,000 rows are the training set and last 10,000 the test set, as
in the original distribution. Both sources hold the same images; the order of
the rows within a split may differ, so results on random subsamples can differ
slightly between them (the source is recorded in the returned ``source``).
"""

import warnings
from pathlib import Path

import numpy as np
from sklearn import datasets
from sklearn.utils import Bunch

from ._locate import DatasetUnavailableError, _skip_example, find_data_file

__all__ = ["fetch_mnist"]

_N_TRAIN = 60_000


def _from_npz(folder):
    out = {}
    for split in ("train", "test"):
        with np.load(folder / f"mnist_{split}.npz") as arrays:
            out[f"X_{split}"] = arrays["X"].reshape(-1, 28, 28).astype(np.uint8, copy=False)
            out[f"y_{split}"] = arrays["y"].astype(np.int64)
    return Bunch(**out, source=str(folder))


def _from_openml(data_home):
    # ``datasets.fetch_*`` is looked up at call time, so that tests can replace the downloader.
    with warnings.catch_warnings():  # one line on failure, not one warning per retry
        warnings.filterwarnings("ignore", message="A network error occurred")
        X, y = datasets.fetch_openml("mnist_784", version=1, as_frame=False, return_X_y=True, data_home=data_home)
    X = np.asarray(X).reshape(-1, 28, 28).astype(np.uint8)
    y = np.asarray(y).astype(np.int64)
    return Bunch(
        X_train=X[:_N_TRAIN],
        y_train=y[:_N_TRAIN],
        X_test=X[_N_TRAIN:],
        y_test=y[_N_TRAIN:],
        source="sklearn.datasets.fetch_openml('mnist_784')",
    )


@_skip_example("fetch_mnist", "mnist", 'raise SystemExit(f"skipped: {exc}")')
def fetch_mnist(path=None, *, data_home=None):
    """MNIST images and labels, train and test splits.

    Where the data come from, in order: the folder ``path`` when given; a
    local ``mnist/`` folder found in ``$SKSSL_DATA`` or in a ``shared/data``
    folder of the current directory, the source tree, or one of their parents;
    else :func:`sklearn.datasets.fetch_openml` (``mnist_784``; cached in
    ``data_home``, else downloaded, about 15 MB).

    Parameters
    ----------
    path : str or path-like, default=None
        A folder holding ``mnist_train.npz`` and ``mnist_test.npz``. None
        looks for one, then downloads.
    data_home : str or path-like, default=None
        The download and cache folder of scikit-learn (``~/scikit_learn_data`` when
        None).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``X_train`` (uint8, 60,000 x 28 x 28), ``y_train`` (int64),
        ``X_test`` (uint8, 10,000 x 28 x 28), ``y_test`` and ``source``.

    Raises
    ------
    DatasetUnavailableError
        If ``path`` lacks the files, or no local copy is found and OpenML
        cannot be reached. The message is one line; catch it to skip.
    """
    if path is not None:
        folder = Path(path)
        if not (folder / "mnist_train.npz").is_file() or not (folder / "mnist_test.npz").is_file():
            raise DatasetUnavailableError(f"MNIST not found: {folder} lacks mnist_train.npz / mnist_test.npz")
        return _from_npz(folder)
    local = find_data_file("mnist", "mnist_train.npz")
    if local is not None and (local.parent / "mnist_test.npz").is_file():
        return _from_npz(local.parent)
    try:
        return _from_openml(data_home)
    except OSError as exc:  # URLError, socket and HTTP errors
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise DatasetUnavailableError(
            "MNIST unavailable: no local mnist/mnist_{train,test}.npz (pass the folder, or put it in "
            f"$SKSSL_DATA or ../shared/data) and scikit-learn's fetch_openml failed ({reason})."
        ) from exc
