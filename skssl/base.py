"""The semi-supervised contract shared by every skssl estimator.

``y == -1`` marks an unlabeled row (the :mod:`sklearn.semi_supervised`
convention). :func:`encode_semi_supervised_target` validates ``y`` and encodes
its labeled part; :class:`SemiSupervisedClassifierMixin` gives estimators the
shared validation, the decoding of predictions and a ``score`` that ignores
unlabeled rows.

Design decisions: user guide, Implementation decisions (shared contract), "Targets".
"""

import warnings

import numpy as np
from sklearn.metrics import accuracy_score
from sklearn.utils import _safe_indexing, column_or_1d, indexable
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data

from .utils._dask import is_dask_array, labeled_accuracy
from .utils.validation import check_sparse_structure
from .utils._warnings import user_stacklevel

__all__ = [
    "UNLABELED",
    "NoUnlabeledDataWarning",
    "SemiSupervisedClassifierMixin",
    "UnlabeledAsClassWarning",
    "encode_semi_supervised_target",
    "labeled_mask",
    "reads_as_minus_one",
]

#: The value of ``y`` that marks an unlabeled row.
UNLABELED = -1


class NoUnlabeledDataWarning(UserWarning):
    """Warning raised when a semi-supervised estimator gets no unlabeled row.

    The estimator then fits the supervised problem on the labeled rows. If
    ``y`` did hold ``-1``, a scikit-learn meta-estimator has usually rewritten
    it (user guide, "Probabilities").

    See Also
    --------
    encode_semi_supervised_target : Emits this warning.

    Examples
    --------
    >>> import warnings
    >>> from skssl.base import NoUnlabeledDataWarning, encode_semi_supervised_target
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = encode_semi_supervised_target([0, 1, 1])
    >>> caught[0].category is NoUnlabeledDataWarning
    True
    """


class UnlabeledAsClassWarning(UserWarning):
    """Warning raised when a classifier learned the unlabeled marker ``-1`` as a class.

    Emitted once per process by the scorers of
    :func:`~skssl.model_selection.labeled_scorer`; wrap such a classifier in
    :class:`~skssl.self_training.LabeledOnlyClassifier`.

    See Also
    --------
    skssl.self_training.LabeledOnlyClassifier : The supervised baseline.
    skssl.model_selection.labeled_scorer : Emits this warning.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skssl.self_training import LabeledOnlyClassifier
    >>> X, y = np.arange(6.0).reshape(-1, 1), np.array([0, 1, -1, -1, 0, 1])
    >>> LogisticRegression().fit(X, y).classes_  # -1 learned as a class: labeled_scorer warns
    array([-1,  0,  1])
    >>> LabeledOnlyClassifier(LogisticRegression()).fit(X, y).classes_
    array([0, 1])
    """


def _as_1d_target(y):
    """Return ``y`` as a 1-D numpy array without modifying the caller's copy."""
    if y is None:
        raise ValueError("This semi-supervised estimator requires y to be passed, but the target y is None.")
    if isinstance(y, (list, tuple)) and _mixes_strings_and_numbers(y):
        # numpy would turn the integer -1 into the string "-1"
        y = np.array(y, dtype=object)
    y = np.asarray(y)
    if y.ndim == 0:
        raise ValueError("y must be a 1-D array of labels, got a scalar.")
    return column_or_1d(y, warn=True)


def _labeled_scoring_rows(X, y):
    """Indexable ``X`` and ``y`` with the mask of the labeled rows; raise when none is labeled."""
    y = _as_1d_target(y)
    X, y = indexable(check_sparse_structure(X), y)
    mask = labeled_mask(y)
    if not mask.size:
        raise ValueError("Cannot score: X and y have no rows.")
    if not mask.any():
        raise ValueError("Cannot score: every row of y is -1 (unlabeled).")
    return X, y, mask


def _labeled_targets(y, rows):
    """``y[rows]`` with an object array's labels made strings or numbers."""
    y_labeled = y[rows]
    return _object_labels_to_concrete(y_labeled) if y_labeled.dtype.kind == "O" else y_labeled


def _mixes_strings_and_numbers(values):
    """Whether a flat sequence holds both strings and non-string scalars."""
    has_str = has_other = False
    for v in values:
        if isinstance(v, (str, bytes)):
            has_str = True
        elif isinstance(v, (list, tuple, np.ndarray)):
            return False  # a nested (column) target: leave it to numpy
        else:
            has_other = True
        if has_str and has_other:
            return True
    return False


def reads_as_minus_one(text):
    """Whether a string (or bytes) label reads as the number -1 (``"-1"``, ``" -1"``, ``"-1.0"``).

    Such a label is the unlabeled marker lost in a conversion to strings.

    Parameters
    ----------
    text : str or bytes
        One label.

    Returns
    -------
    bool
        ``True`` when the stripped label parses as the float -1.

    Examples
    --------
    >>> from skssl.base import reads_as_minus_one
    >>> [reads_as_minus_one(v) for v in ("-1", " -1 ", "-1.0", b"-1", "-10", "spam", "1")]
    [True, True, True, True, False, False, False]
    """
    if isinstance(text, (bytes, np.bytes_)):
        text = bytes(text).decode("latin-1")
    try:
        return float(str(text).strip()) == UNLABELED
    except ValueError:
        return False


def labeled_mask(y):
    """Boolean mask of the labeled rows of a semi-supervised target.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels with ``-1`` marking unlabeled rows; in an ``object`` array
        only the numeric ``-1`` is the marker.

    Returns
    -------
    mask : ndarray of bool, shape (n_samples,)
        ``True`` where the row is labeled.

    Raises
    ------
    ValueError
        If ``y`` holds the string ``"-1"``, which is ambiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.base import labeled_mask
    >>> labeled_mask(np.array(["spam", -1, "ham"], dtype=object))
    array([ True, False,  True])
    """
    y = _as_1d_target(y)
    kind = y.dtype.kind
    if kind in "US":
        found = [v for v in np.unique(y) if reads_as_minus_one(v)]
        if found:
            raise ValueError(
                f"y is a string array that contains '-1' (as {found[0].item()!r}). skssl marks unlabeled "
                "rows with the integer -1; pass string labels as an object array "
                "with the integer -1 for unlabeled rows, e.g. "
                "np.array(['spam', -1, 'ham'], dtype=object)."
            )
        return np.ones(y.shape[0], dtype=bool)
    if kind == "O":
        found = [v for v in y if isinstance(v, (str, bytes)) and reads_as_minus_one(v)]
        if found:
            raise ValueError(
                f"y contains the string '-1' (as {found[0]!r}). skssl marks unlabeled rows with the "
                "integer -1, not the string '-1'; replace it with the integer -1."
            )
        return np.fromiter(
            (
                not (
                    isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and v == UNLABELED
                )
                for v in y
            ),
            dtype=bool,
            count=y.shape[0],
        )
    if kind in "iuf":
        return y != UNLABELED
    if kind == "b":
        return np.ones(y.shape[0], dtype=bool)
    raise ValueError(
        f"y has dtype {y.dtype}, which cannot hold class labels; use integers, "
        "or strings in an object array with the integer -1 for unlabeled rows."
    )


def _object_labels_to_concrete(y_labeled):
    """Turn the labeled part of an object ``y`` into a string or numeric array (sklearn's ``type_of_target``)."""
    if all(isinstance(v, str) for v in y_labeled):
        return y_labeled.astype(str)
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in y_labeled):
        return np.array(y_labeled.tolist())
    kinds = sorted({type(v).__name__ for v in y_labeled})
    if kinds == ["bytes"]:
        raise ValueError(
            "The labels of y are bytes, which skssl does not read as class labels; decode them to str "
            "(e.g. [v.decode() if isinstance(v, bytes) else v for v in y]) and keep the integer -1 for unlabeled rows."
        )
    raise ValueError(
        f"The labels of y mix types {kinds}; use one type of label (all "
        "integers or all strings) with the integer -1 for unlabeled rows."
    )


def encode_semi_supervised_target(y, *, warn_no_unlabeled=True):
    """Validate a semi-supervised target and encode its labeled part.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels with ``-1`` marking unlabeled rows.
    warn_no_unlabeled : bool, default=True
        Whether to warn when no row is unlabeled.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The sorted labeled classes; ``-1`` is never one of them.
    y_encoded : ndarray of int64, shape (n_samples,)
        Class indices of the labeled rows, ``-1`` elsewhere.
    mask : ndarray of bool, shape (n_samples,)
        ``True`` where the row is labeled.

    Raises
    ------
    ValueError
        If no row is labeled, fewer than two classes are labeled, the labels
        are not classification targets, or a string ``"-1"`` appears.

    Warns
    -----
    NoUnlabeledDataWarning
        If no row is unlabeled.

    Examples
    --------
    >>> from skssl.base import encode_semi_supervised_target
    >>> classes, y_enc, mask = encode_semi_supervised_target([3, -1, 5, 3])
    >>> classes
    array([3, 5])
    >>> y_enc
    array([ 0, -1,  1,  0])
    """
    y = _as_1d_target(y)
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("Input y contains NaN or infinity; mark unlabeled rows with -1.")
    if y.shape[0] == 0:
        raise ValueError("y is empty (0 samples): a classifier needs at least one labeled row per class.")
    mask = labeled_mask(y)
    n_labeled = int(mask.sum())
    if n_labeled == 0:
        raise ValueError(
            "y has no labeled row: every entry is -1 (unlabeled). A "
            "semi-supervised classifier needs at least one labeled row per class."
        )
    y_labeled = y[mask]
    if y_labeled.dtype.kind == "O":
        y_labeled = _object_labels_to_concrete(y_labeled)
    check_classification_targets(y_labeled)
    classes, codes = np.unique(y_labeled, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(
            f"The labeled rows of y hold only one class ({classes[0]}); a "
            "classifier needs samples of at least 2 classes in the data."
        )
    if warn_no_unlabeled and n_labeled == y.shape[0]:
        warnings.warn(
            "y has no unlabeled row (no entry equals -1); fitting the supervised problem on the labeled rows. "
            "If y did hold -1 rows, a scikit-learn meta-estimator (OneVsRestClassifier, CalibratedClassifierCV, "
            "OneVsOneClassifier, ...) probably relabelled or split it, so -1 was taken as a class or its rows "
            "were dropped: fit the skssl estimator on the multi-class y directly (it handles several classes "
            "itself) and get probabilities from skssl.calibration.SemiSupervisedCalibratedClassifierCV.",
            NoUnlabeledDataWarning,
            stacklevel=user_stacklevel(),
        )
    y_encoded = np.full(y.shape[0], UNLABELED, dtype=np.int64)
    y_encoded[mask] = codes.ravel()
    return classes, y_encoded, mask


class SemiSupervisedClassifierMixin:
    """Mixin giving an estimator skssl's semi-supervised contract.

    Put it before :class:`~sklearn.base.ClassifierMixin` in the bases; ``fit``
    calls :meth:`_validate_semi_supervised_data` and maps class indices back
    with :meth:`_decode`. A supervised estimator sets
    ``_uses_unlabeled_rows = False`` to fit without :class:`NoUnlabeledDataWarning`.

    See Also
    --------
    encode_semi_supervised_target : The target encoding the mixin applies.
    skssl.utils.estimator_checks.check_semi_supervised_estimator : Checks the contract.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator, ClassifierMixin
    >>> from skssl.base import SemiSupervisedClassifierMixin
    >>> class MajorityClassifier(SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator):
    ...     def fit(self, X, y):
    ...         X, y_enc, mask = self._validate_semi_supervised_data(X, y)
    ...         self.majority_ = np.bincount(y_enc[mask]).argmax()
    ...         self._set_transduction(y_enc, np.full(y_enc.shape[0], self.majority_))
    ...         return self
    ...     def predict(self, X):
    ...         return self._decode(np.full(len(X), self.majority_))
    >>> clf = MajorityClassifier().fit(np.zeros((4, 1)), np.array(["a", -1, "a", "b"], dtype=object))
    >>> clf.classes_.tolist(), clf.transduction_.tolist()
    (['a', 'b'], ['a', 'a', 'a', 'b'])
    """

    _uses_unlabeled_rows = True

    def _validate_semi_supervised_data(
        self, X, y, *, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), **check_params
    ):
        """Validate ``X`` and ``y`` for ``fit``; set ``classes_`` and ``n_features_in_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, finite.
        y : array-like of shape (n_samples,)
            Labels with ``-1`` for unlabeled rows.
        accept_sparse, dtype, **check_params
            Passed on to :func:`sklearn.utils.validation.validate_data`.

        Returns
        -------
        X : {ndarray, sparse matrix}
            The validated data.
        y_encoded : ndarray of int64, shape (n_samples,)
            Class indices for labeled rows, ``-1`` for unlabeled rows.
        mask : ndarray of bool, shape (n_samples,)
            ``True`` for labeled rows.
        """
        y = _as_1d_target(y)
        X = check_sparse_structure(X)
        X = validate_data(self, X, accept_sparse=accept_sparse, dtype=dtype, reset=True, **check_params)
        check_consistent_length(X, y)
        self.classes_, y_encoded, mask = encode_semi_supervised_target(y, warn_no_unlabeled=self._uses_unlabeled_rows)
        return X, y_encoded, mask

    def _decode(self, indices):
        """Map class indices back to the user's labels."""
        return self.classes_[np.asarray(indices, dtype=np.intp)]

    def _set_transduction(self, y_encoded, predicted_indices):
        """Set ``transduction_``: labeled rows keep their label, others get the prediction."""
        final = np.where(y_encoded == UNLABELED, predicted_indices, y_encoded)
        self.transduction_ = self._decode(final)
        return self.transduction_

    def score(self, X, y, sample_weight=None):
        """Accuracy on the labeled rows of ``(X, y)``; rows with ``y == -1`` are ignored.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True labels, ``-1`` for rows to ignore.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Mean accuracy of ``self.predict(X)`` on the labeled rows.

        Raises
        ------
        ValueError
            If no row of ``y`` is labeled.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            predicted = self.predict(X)
            if not is_dask_array(predicted):
                import dask.array as da

                predicted = da.from_array(np.asarray(predicted), chunks=(X.chunks[0],))
            return labeled_accuracy(predicted, y, sample_weight, unlabeled=UNLABELED)
        X, y, mask = _labeled_scoring_rows(X, y)
        rows = np.flatnonzero(mask)
        X_labeled = _safe_indexing(X, rows)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[rows]
        return accuracy_score(_labeled_targets(y, rows), self.predict(X_labeled), sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
