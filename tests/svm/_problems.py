"""Small problems shared by the tests of the safeguard's check and of its replay."""

import numpy as np


def bars_along_the_labels(seed, n=300, n_labeled=16):
    """Two long bars, the classes, side by side: the gap between them is the right separator, half the labels each.

    On seed 0 DeterministicAnnealingSVC's model leads the supervised l2-SVM on the check's held-out labels by one
    row (within a standard error), on seed 1 by two (beyond it).
    """
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    across = np.where(y == 1, 1.0, -1.0) + 0.5 * rng.randn(n)
    along = 6.0 * rng.randn(n)
    X = np.c_[across + 0.3 * along, along]
    y_semi = np.full(n, -1)
    labeled = np.r_[[rng.choice(np.flatnonzero(y == k), n_labeled // 2, replace=False) for k in (0, 1)]].ravel()
    y_semi[labeled] = y[labeled]
    return X, y, y_semi
