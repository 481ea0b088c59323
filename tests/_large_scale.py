"""Random small problems for the tests of data of a very large scale (CGLS's rounding floor)."""

import numpy as np


def very_large_scale_problem(seed):
    """``(X, y, y_semi, scale)``: a small random binary problem, its labels, a few kept, and a scale of 1e9-1e14.

    ``X`` is of ordinary scale; the tests fit ``X * scale``. The first two rows are labeled with both classes.
    """
    rng = np.random.RandomState(seed)
    n, d = rng.randint(30, 80), rng.randint(2, 6)
    X = rng.randn(n, d)
    y = (X[:, 0] + 0.3 * rng.randn(n) > 0).astype(int)
    y_semi = np.where(np.arange(n) < rng.randint(8, 15), y, -1)
    y_semi[:2] = [0, 1]
    return X, y, y_semi, 10.0 ** rng.uniform(9, 14)
