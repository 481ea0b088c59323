"""Hide labels to turn a supervised dataset into a semi-supervised experiment.

:func:`make_semi_supervised` returns a target whose dtype can hold -1:
signed integer and float targets keep their dtype, unsigned ones become the
smallest signed dtype that holds every label (``uint8`` gives ``int16``),
and every other target an ``object`` array holding the integer ``-1``. A
class spelt ``"-1"`` (or equal to -1) cannot be told from the marker and
raises a ``ValueError``.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.multiclass import check_classification_targets

from ..base import reads_as_minus_one


@validate_params(
    {
        "y": ["array-like"],
        "n_labeled": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "stratify": ["boolean"],
        "per_class": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_semi_supervised(y, n_labeled, *, random_state=None, stratify=True, per_class=False):
    """Hide all labels of ``y`` but ``n_labeled`` of them behind ``-1``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Fully labeled target (must not contain ``-1``).
    n_labeled : int or float
        Number of rows that keep their label; a float in (0, 1) is a fraction
        of the rows.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.
    stratify : bool, default=True
        Keep the class proportions among the labeled rows and at least one
        labeled row per class (``n_labeled`` must then be at least the number
        of classes). If False, draw the labeled rows uniformly at random.
    per_class : bool, default=False
        Keep exactly ``n_labeled`` labeled rows in *every* class (an int,
        at most the size of the smallest class); ``stratify`` is then unused.

    Returns
    -------
    y_semi : ndarray of shape (n_samples,)
        A copy of ``y`` with the hidden labels set to ``-1``. Signed integer
        and float ``y`` keep their dtype; unsigned integers come back as the
        smallest signed integer dtype holding every label (``uint8`` gives
        ``int16``); string and other labels come back as an ``object`` array
        holding the integer ``-1``, the form skssl's estimators expect.

    Raises
    ------
    ValueError
        If ``y`` already holds ``-1`` (as a number, or as the string ``"-1"``,
        which would be read as the unlabeled marker), or if ``n_labeled`` is
        too large or too small for the classes.

    See Also
    --------
    skssl.model_selection.SemiSupervisedKFold : Cross-validation that keeps the hidden rows in training.

    Examples
    --------
    >>> from skssl.datasets import make_semi_supervised
    >>> y_semi = make_semi_supervised([0, 0, 1, 1, 0, 1], n_labeled=2, random_state=0)
    >>> sorted(y_semi[y_semi != -1].tolist())
    [0, 1]
    >>> y_semi = make_semi_supervised([0, 0, 0, 1, 1, 1], 2, per_class=True, random_state=0)
    >>> sorted(y_semi[y_semi != -1].tolist())
    [0, 0, 1, 1]
    """
    y = column_or_1d(np.asarray(y))
    _check_no_minus_one(y)
    check_classification_targets(y)
    n_samples = y.shape[0]
    out_dtype = _semi_supervised_dtype(y)
    if per_class and not isinstance(n_labeled, Integral):
        raise ValueError(f"per_class=True takes an int n_labeled, got {n_labeled!r}.")
    if isinstance(n_labeled, Real) and not isinstance(n_labeled, Integral):
        n_labeled = max(1, int(round(n_labeled * n_samples)))
    if n_labeled > n_samples:
        raise ValueError(f"n_labeled={n_labeled} is larger than the number of rows ({n_samples}).")
    rng = check_random_state(random_state)
    classes, y_idx = np.unique(y, return_inverse=True)
    if per_class:
        smallest = int(np.bincount(y_idx).min())
        if n_labeled > smallest:
            raise ValueError(f"n_labeled={n_labeled} per class is larger than the smallest class ({smallest} rows).")
        keep = np.concatenate(
            [rng.choice(np.flatnonzero(y_idx == k), n_labeled, replace=False) for k in range(classes.shape[0])]
        )
    elif stratify:
        if n_labeled < classes.shape[0]:
            raise ValueError(
                f"n_labeled={n_labeled} is smaller than the number of classes "
                f"({classes.shape[0]}); stratify=True keeps one labeled row per class."
            )
        keep = _stratified_draw(y_idx, classes.shape[0], n_labeled, rng)
    else:
        keep = rng.choice(n_samples, n_labeled, replace=False)
    y_semi = np.full(n_samples, -1, dtype=out_dtype)
    y_semi[keep] = y[keep]
    return y_semi


def _check_no_minus_one(y):
    """Raise if ``y`` holds a label that would read as the unlabeled marker -1."""
    kind = y.dtype.kind
    if kind in "if":
        clash = bool(np.any(y == -1))
    elif kind in "US":
        clash = any(reads_as_minus_one(v) for v in np.unique(y))
    elif kind == "O":
        clash = any(
            (isinstance(v, (str, bytes)) and reads_as_minus_one(v))
            or (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and v == -1)
            for v in y
        )
    else:  # unsigned integers and booleans cannot hold -1
        clash = False
    if clash:
        raise ValueError(
            "y already contains -1 (as a label, or the string '-1'), which skssl reads as the "
            "unlabeled marker; make_semi_supervised expects a fully labeled y without such a "
            "class. Rename that class first (e.g. with sklearn.preprocessing.LabelEncoder)."
        )


def _semi_supervised_dtype(y):
    """The dtype of the returned target: one that holds both every label and -1."""
    kind = y.dtype.kind
    if kind in "if":
        return y.dtype
    if kind == "u":
        # The smallest signed integer dtype holding every label, e.g. uint8 -> int16.
        largest = int(y.max()) if y.shape[0] else 0
        for candidate in (np.int8, np.int16, np.int32, np.int64):
            if np.dtype(candidate).itemsize > y.dtype.itemsize or candidate is np.int64:
                if largest <= np.iinfo(candidate).max:
                    return np.dtype(candidate)
        raise ValueError(
            f"y is {y.dtype} with labels up to {largest}, which no signed integer dtype holds "
            "together with the unlabeled marker -1; encode the labels with "
            "sklearn.preprocessing.LabelEncoder first."
        )
    return np.dtype(object)


def _stratified_draw(y_idx, n_classes, n_labeled, rng):
    """Indices of ``n_labeled`` rows, at least one per class, proportional otherwise."""
    counts = np.bincount(y_idx, minlength=n_classes)
    # One row per class first, then the rest split in proportion to the class
    # sizes by largest remainder, capped at each class's size.
    quota = np.ones(n_classes, dtype=np.int64)
    extra = n_labeled - n_classes
    if extra > 0:
        share = (counts - 1) / max(counts.sum() - n_classes, 1) * extra
        add = np.floor(share).astype(np.int64)
        order = np.argsort(-(share - add), kind="stable")
        add[order[: extra - add.sum()]] += 1
        quota += np.minimum(add, counts - 1)
    picks = [rng.choice(np.flatnonzero(y_idx == k), quota[k], replace=False) for k in range(n_classes)]
    return np.sort(np.concatenate(picks))
