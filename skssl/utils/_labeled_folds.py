"""The folds of the labeled rows that a fit's own checks hold out, built in one place.

Several fits ask their labeled rows before they decide: the check of
``alpha="auto"`` (:mod:`skssl.svm.defaults._penalty_check`), the safeguard's
cross-validated check (:mod:`skssl.svm.safeguard._fallback_check`), the
annealing start (:mod:`skssl.svm.defaults._annealing_start`) and the
safeguard of Curriculum Labeling (:mod:`skssl.self_training._safeguard`).
Each hides folds of the labeled rows stratified by class;
:func:`stratified_fold_ids` gives every labeled row its fold, the rows taken
in the order the caller puts them (the linear S3VMs: an order of the rows'
content, so that the folds depend neither on where a row sits nor on
repeats), and :func:`fold_splits` the ``(train, held_out)`` pairs.
Two ways of filling the folds are kept, since each check was tuned with
its own: the rows of each class dealt in turn (``dealt=True``), or in runs
as scikit-learn's ``StratifiedKFold`` fills them, optionally shuffled.
"""

import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold

__all__ = ["fold_splits", "stratified_fold_ids"]


def stratified_fold_ids(classes, n_folds, *, dealt=True, seed=None):
    """The fold (``0 .. n_folds - 1``) of each row, stratified by its class.

    Parameters
    ----------
    classes : ndarray of shape (n_rows,)
        The class of each row, the rows in the order in which they fill the folds.
    n_folds : int
        Number of folds, at least 2.
    dealt : bool, default=True
        ``True``: the rows of each class are dealt in turn, the ``k``-th row of
        a class to fold ``k % n_folds``. ``False``: each class fills the folds
        in runs, with the fold sizes of scikit-learn's ``StratifiedKFold``
        (a class with fewer rows than folds is left out of some folds).
    seed : int or None, default=None
        With ``dealt=False``: the seed that shuffles each class's runs
        (``StratifiedKFold(shuffle=True, random_state=seed)``); ``None``: no
        shuffle. Not used with ``dealt=True``.

    Returns
    -------
    fold : ndarray of int of shape (n_rows,)

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.utils._labeled_folds import stratified_fold_ids
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> stratified_fold_ids(y, 3).tolist()
    [0, 1, 2, 0, 1, 2]
    >>> stratified_fold_ids(y, 2, dealt=False).tolist()
    [0, 0, 1, 0, 1, 1]
    """
    classes = np.asarray(classes)
    n_folds = int(n_folds)
    if n_folds < 2:
        raise ValueError(f"n_folds must be at least 2; got {n_folds}.")
    fold = np.empty(classes.shape[0], dtype=np.intp)
    if dealt:
        for k in np.unique(classes):
            members = np.flatnonzero(classes == k)  # in the caller's order
            fold[members] = np.arange(members.shape[0]) % n_folds
        return fold
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=seed is not None, random_state=seed)
    with warnings.catch_warnings():
        # A class with fewer rows than folds is allowed: it is held out in some folds only.
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        for k, (_, held) in enumerate(splitter.split(np.zeros((classes.shape[0], 1)), classes)):
            fold[held] = k
    return fold


def fold_splits(fold):
    """``(train, held_out)`` index arrays of each fold of :func:`stratified_fold_ids`, fold 0 first.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.utils._labeled_folds import fold_splits
    >>> [(train.tolist(), held.tolist()) for train, held in fold_splits(np.array([0, 1, 0, 1]))]
    [([1, 3], [0, 2]), ([0, 2], [1, 3])]
    """
    fold = np.asarray(fold)
    return [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(int(fold.max()) + 1)]
