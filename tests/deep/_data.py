"""Small data and fast settings shared by the deep tests."""

import numpy as np
from sklearn.datasets import make_blobs

#: A few steps of a tiny MLP: enough to run every code path, in well under a second.
FAST = dict(max_epochs=2, iterations_per_epoch=3, batch_size=8, mu=2, module__hidden_units=(16,))
FAST_IMG = {k: v for k, v in FAST.items() if not k.startswith("module__")}


def blobs(n=120, n_labeled=12, seed=0, centers=3):
    """``make_blobs`` with ``n_labeled // centers`` labeled rows per class, the rest -1."""
    X, y = make_blobs(n, centers=centers, random_state=seed)
    y_semi = np.full(n, -1)
    rng = np.random.default_rng(seed)
    for c in range(centers):
        y_semi[rng.choice(np.flatnonzero(y == c), n_labeled // centers, replace=False)] = c
    return X, y, y_semi
