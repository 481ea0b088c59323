"""The benchmarks' data sets, made once per process and cached.

Every set is a semi-supervised split ``(X, y_semi, X_test, y_test)`` with
``-1`` marking unlabeled rows, from data that needs no download: pcmac ships
with skssl, the others are generated or come with scikit-learn.
"""

from functools import cache

import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.model_selection import train_test_split

from skssl.datasets import load_pcmac, make_semi_supervised

#: The names accepted by :func:`load`.
DATASETS = ("pcmac", "dense-binary", "dense-3class", "digits")


@cache
def load(name):
    """``(X, y_semi, X_test, y_test)`` of the set ``name``."""
    if name == "pcmac":
        data = load_pcmac()
        return data.X_train, data.y_train, data.X_test, data.y_test
    if name in ("dense-binary", "dense-3class"):
        n_classes = 2 if name == "dense-binary" else 3
        X, y = make_classification(
            n_samples=3000, n_features=100, n_informative=20, n_classes=n_classes, class_sep=1.0, random_state=0
        )
        labels = 50
    elif name == "digits":
        X, y = load_digits(return_X_y=True)
        X = X / 16.0
        labels = 100
    else:
        raise ValueError(f"unknown data set {name!r}; choose from {DATASETS}")
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    return np.ascontiguousarray(X), make_semi_supervised(y, labels, random_state=0), X_test, y_test
