"""MNIST for the deep benchmarks, through :func:`skssl.datasets.fetch_mnist` (the one data-loading path).

``fetch_mnist`` looks in ``$SKSSL_DATA``, then in a ``shared/data`` folder
beside the repository (``mnist/mnist_{train,test}.npz``), then downloads
OpenML's ``mnist_784`` through scikit-learn. The committed logs were measured
on the local copy, whose rows are ordered by class; OpenML's rows are in
another order, so the same seed draws other images. A run on OpenML's copy is
therefore not the measurement the committed tables hold: its rows go to the
git-ignored ``*.partial.jsonl`` beside the log (``benchmarks/README.md``).
"""

import sys
from pathlib import Path

from _results import partial_path

from skssl.datasets import DatasetUnavailableError, fetch_mnist

__all__ = ["load_mnist"]


def load_mnist(script, log):
    """Return ``(train, test, log)``: dicts with ``X`` (uint8, n x 28 x 28) and ``y``, and the log to append to.

    Prints one line and exits (status 0) when MNIST is neither local nor downloadable.
    """
    try:
        data = fetch_mnist()
    except DatasetUnavailableError as exc:
        print(f"{script}: {exc}")
        sys.exit(0)
    log = Path(log)
    if "openml" in data.source:
        log = partial_path(log)
        print(f"{script}: MNIST from OpenML (no local copy): rows go to {log}, not the committed log", file=sys.stderr)
    train = {"X": data.X_train, "y": data.y_train}
    test = {"X": data.X_test, "y": data.y_test}
    return train, test, log
