"""Calibrated class probabilities for semi-supervised classifiers.

scikit-learn's :class:`~sklearn.calibration.CalibratedClassifierCV` takes ``-1``
for a class. :class:`SemiSupervisedCalibratedClassifierCV` fits Platt's sigmoid
(Platt, 1999) or isotonic regression (Zadrozny and Elkan, KDD 2002) on held-out
decision values with folds over the labeled rows only, and keeps a calibrated
supervised ``fallback`` where its cross-validated Brier score (Brier, 1950) is lower.

Design decisions and measurements: user guide, "Probabilities".
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.exceptions import NotFittedError
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.utils import _safe_indexing, get_tags, indexable
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, has_fit_parameter

from .base import UNLABELED, SemiSupervisedClassifierMixin, _as_1d_target, encode_semi_supervised_target
from .model_selection import SemiSupervisedKFold
from .svm import LinearL2SVC, TransductiveSVC
from .utils.validation import check_sparse_structure

__all__ = ["SemiSupervisedCalibratedClassifierCV"]


def _with_rows_unlabeled(y, rows):
    """A copy of ``y`` with ``y[rows] = -1``, in a dtype that can hold the integer -1 next to the labels."""
    kind = y.dtype.kind
    if kind in "iu":
        y_new = y.astype(np.int64)
    elif kind == "f":
        y_new = y.copy()
    else:  # strings, booleans, objects: the sentinel is the integer -1 in an object array
        y_new = y.astype(object)
    y_new[rows] = UNLABELED
    return y_new


def _scores(estimator, X, n_classes):
    """Decision values of ``estimator`` on ``X``: one column for two classes (``classes_[1]``), else one per class."""
    if hasattr(estimator, "decision_function"):
        scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
    else:
        scores = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        if n_classes == 2:
            scores = scores[:, 1]
    return scores.reshape(-1, 1) if scores.ndim == 1 else scores


def _smoothed_targets(positive, sample_weight):
    """Platt's targets: ``(N+ + 1) / (N+ + 2)`` for the positive rows, ``1 / (N- + 2)`` for the others."""
    n_pos = sample_weight[positive].sum()
    n_neg = sample_weight[~positive].sum()
    return np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


class _SigmoidCalibrator:
    """Platt's sigmoid ``1 / (1 + exp(-(a f + b)))`` fitted with smoothed targets (the module's Decisions)."""

    def fit(self, scores, positive, sample_weight):
        targets = _smoothed_targets(positive, sample_weight)
        # The decisions of an S3VM can reach hundreds; the logistic fit is invariant to scaling them, and lbfgs
        # converges better near unit scale.
        self.scale_ = max(float(np.max(np.abs(scores))), 1.0)
        f = (scores / self.scale_).reshape(-1, 1)
        model = LogisticRegression(C=np.inf)
        model.fit(
            np.vstack([f, f]),
            np.r_[np.ones(f.shape[0]), np.zeros(f.shape[0])],
            sample_weight=np.r_[sample_weight * targets, sample_weight * (1.0 - targets)],
        )
        self.a_, self.b_ = float(model.coef_[0, 0]) / self.scale_, float(model.intercept_[0])
        return self

    def predict(self, scores):
        return 1.0 / (1.0 + np.exp(-(self.a_ * scores + self.b_)))


class _IsotonicCalibrator:
    """A non-decreasing step function of the decision value, clipped to [0, 1] and to the fitted range."""

    def fit(self, scores, positive, sample_weight):
        self.model_ = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
        self.model_.fit(scores, positive.astype(np.float64), sample_weight=sample_weight)
        return self

    def predict(self, scores):
        return self.model_.predict(scores)


_CALIBRATORS = {"sigmoid": _SigmoidCalibrator, "isotonic": _IsotonicCalibrator}


class _CalibratedFold:
    """One fitted estimator with a calibrator per column of its decision values."""

    def __init__(self, estimator, calibrators, n_classes):
        self.estimator = estimator
        self.calibrators = calibrators
        self.n_classes = n_classes

    def predict_proba(self, X):
        return _calibrated_proba(_scores(self.estimator, X, self.n_classes), self.calibrators, self.n_classes)


def _fit_calibrators(method, scores, codes, sample_weight, n_classes):
    """One calibrator per column of ``scores``: column ``k`` against ``codes == k`` (``1`` for two classes)."""
    targets = [1] if n_classes == 2 else range(n_classes)
    return [_CALIBRATORS[method]().fit(scores[:, j], codes == k, sample_weight) for j, k in enumerate(targets)]


def _calibrated_proba(scores, calibrators, n_classes):
    """Probabilities from the calibrated columns: ``1 - p`` beside ``p`` for two classes, else normalised rows."""
    if n_classes == 2:
        p = np.clip(calibrators[0].predict(scores[:, 0]), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])
    proba = np.column_stack([cal.predict(scores[:, k]) for k, cal in enumerate(calibrators)])
    total = proba.sum(axis=1, keepdims=True)
    # Where every calibrated column is 0 (isotonic below every fitted value), nothing favours a class.
    return np.divide(proba, total, out=np.full_like(proba, 1.0 / n_classes), where=total > 0)


def _fit_supervised(estimator, X, codes, weights, rows, weighted):
    """A clone of the supervised ``estimator`` fitted on ``X[rows]``, the class codes ``0 .. K-1`` as labels."""
    fit_params = {"sample_weight": weights[rows]} if weighted else {}
    return clone(estimator).fit(_safe_indexing(X, rows), codes[rows], **fit_params)


def _cross_validated_brier(method, fold_scores, splits, codes, weights, n_classes):
    """Weighted Brier score of calibrated out-of-fold probabilities, halved (sklearn's for two classes).

    Each fold's decision values go through calibrators fitted on the other folds' decision values and labels,
    so no held-out label calibrates its own probability.
    """
    loss = total = 0.0
    for k, test in enumerate(splits):
        rows = np.concatenate([t for j, t in enumerate(splits) if j != k])
        scores = np.vstack([s for j, s in enumerate(fold_scores) if j != k])
        calibrators = _fit_calibrators(method, scores, codes[rows], weights[rows], n_classes)
        proba = _calibrated_proba(fold_scores[k], calibrators, n_classes)
        onehot = codes[test][:, None] == np.arange(n_classes)[None, :]
        loss += float(weights[test] @ ((proba - onehot) ** 2).sum(axis=1)) / 2
        total += float(weights[test].sum())
    return loss / total


class SemiSupervisedCalibratedClassifierCV(
    SemiSupervisedClassifierMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator
):
    """Probability calibration of a semi-supervised classifier, cross-validated on the labeled rows.

    The counterpart of :class:`sklearn.calibration.CalibratedClassifierCV` for a
    ``y`` where ``-1`` marks unlabeled rows: per fold of the labeled rows, a clone
    is fitted with the held-out labels turned into ``-1``, and its decision values
    there fit one calibrator per class against the rest (normalised to sum to 1).

    Parameters
    ----------
    estimator : estimator object, default=None
        A skssl semi-supervised classifier with ``decision_function`` or
        ``predict_proba``; it is cloned. ``None`` means
        :class:`~skssl.svm.TransductiveSVC`.
    method : {"sigmoid", "isotonic"}, default="sigmoid"
        Platt's sigmoid of the decision value, or isotonic regression, which
        needs more labeled rows (a few hundred) not to overfit.
    cv : int, cross-validation generator or iterable, default=5
        The splitter of the labeled rows, as in
        :class:`~skssl.model_selection.SemiSupervisedKFold` (an int gives a
        ``StratifiedKFold`` over the labeled classes). Every labeled class
        needs at least ``cv`` rows when ``cv`` is an int.
    ensemble : bool, default=False
        False: calibrators fitted on all out-of-fold decision values, applied
        to one estimator fitted on the whole ``y``. True: scikit-learn's
        default, each fold's estimator and calibrators, probabilities averaged
        (too timid with few labels).
    fallback : estimator object, "auto" or None, default="auto"
        A supervised classifier with ``decision_function`` or ``predict_proba``,
        cloned and fitted on the labeled rows (class codes as labels) and
        calibrated on the same folds. It replaces the estimator when its
        cross-validated Brier score is strictly lower. ``"auto"`` is
        :class:`~skssl.svm.LinearL2SVC`; ``None`` skips the check (as does a
        single fold). It costs ``cv + 1`` fits on the labeled rows.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labeled classes; ``-1`` is never one of them.
    calibrated_classifiers_ : list
        Fitted estimator-calibrator pairs (``estimator``, ``predict_proba``):
        one per fold with ``ensemble=True``, else one; fallbacks where kept.
    fell_back_ : bool or None
        Whether the calibrated ``fallback`` replaced the estimator; ``None``
        when the check did not run.
    fallback_scores_ : ndarray of shape (2,) or None
        Cross-validated Brier scores (halved sum of squares; lower is better)
        of the calibrated fallback and estimator; ``None`` without the check.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (the most probable class where unlabeled).
    n_features_in_ : int
        Number of features seen during ``fit`` (of the first fitted estimator).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    sklearn.calibration.CalibratedClassifierCV : The supervised wrapper; it
        takes ``-1`` for a class.
    skssl.model_selection.SemiSupervisedKFold : The splitter of the labeled rows.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from skssl.calibration import SemiSupervisedCalibratedClassifierCV
    >>> from skssl.datasets import make_semi_supervised
    >>> from skssl.svm import TransductiveSVC
    >>> X, y = make_blobs(200, centers=2, random_state=0)
    >>> y_semi = make_semi_supervised(y, 20, per_class=True, random_state=0)
    >>> clf = SemiSupervisedCalibratedClassifierCV(TransductiveSVC(), cv=3).fit(X, y_semi)
    >>> clf.classes_
    array([0, 1])
    >>> proba = clf.predict_proba(X)
    >>> proba.shape, bool(abs(proba.sum(axis=1) - 1).max() < 1e-12)
    ((200, 2), True)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "method": [StrOptions({"sigmoid", "isotonic"})],
        "cv": ["cv_object"],
        "ensemble": ["boolean"],
        "fallback": [HasMethods(["fit"]), StrOptions({"auto"}), None],
    }

    def __init__(self, estimator=None, *, method="sigmoid", cv=5, ensemble=False, fallback="auto"):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.ensemble = ensemble
        self.fallback = fallback

    def _base_estimator(self):
        return TransductiveSVC() if self.estimator is None else self.estimator

    def _fallback_estimator(self):
        if isinstance(self.fallback, str):  # "auto", the only string the constraints let through
            return LinearL2SVC()
        return self.fallback

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the fold estimators and their calibrators; rows with ``y == -1`` are unlabeled.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, in any form the wrapped estimator takes; only its
            rows are selected here.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, passed to the wrapped estimator's ``fit``, to the
            fallback's (labeled rows) and, for the held-out rows, to the
            calibrators and the cross-validated Brier scores.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            If a labeled class has fewer rows than ``cv`` folds, if a fold's
            training rows miss a class, or if ``sample_weight`` is given and
            the estimator's or the fallback's ``fit`` takes none.
        """
        base = self._base_estimator()
        fallback = self._fallback_estimator()
        y = _as_1d_target(y)
        X, y = indexable(check_sparse_structure(X), y)
        # The wrapped estimator warns itself if it meets no -1 (the folds always give it some).
        self.classes_, y_encoded, labeled = encode_semi_supervised_target(y, warn_no_unlabeled=False)
        n_classes = self.classes_.shape[0]
        fit_params = {}
        weights = np.ones(y.shape[0])
        if sample_weight is not None:
            for role, est in (("estimator", base), ("fallback", fallback)):
                if est is not None and not has_fit_parameter(est, "sample_weight"):
                    raise ValueError(
                        f"sample_weight was given but {type(est).__name__}.fit (the {role}) does not take "
                        "sample_weight."
                    )
            weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
            fit_params = {"sample_weight": weights}
        if isinstance(self.cv, numbers.Integral):
            counts = np.bincount(y_encoded[labeled], minlength=n_classes)
            if counts.min() < self.cv:
                raise ValueError(
                    f"Requesting {self.cv}-fold cross-validation but the labeled rows hold only {counts.min()} "
                    f"row(s) of class {self.classes_[counts.argmin()]!r}; label more rows or lower cv."
                )

        splits = [test for _, test in SemiSupervisedKFold(self.cv).split(X, y)]
        semi = []
        for test in splits:
            estimator = clone(base).fit(X, _with_rows_unlabeled(y, test), **fit_params)
            if len(estimator.classes_) != n_classes:
                raise ValueError(
                    f"A fold's training rows hold the labeled classes {list(estimator.classes_)}, not all of "
                    f"{list(self.classes_)}; use a stratified splitter for cv."
                )
            semi.append((estimator, _scores(estimator, _safe_indexing(X, test), n_classes)))

        self.fell_back_, self.fallback_scores_ = None, None
        chosen = semi
        if fallback is not None and len(splits) >= 2:
            weighted = sample_weight is not None
            supervised = []
            for test in splits:
                rows = np.setdiff1d(np.flatnonzero(labeled), test)
                estimator = _fit_supervised(fallback, X, y_encoded, weights, rows, weighted)
                supervised.append((estimator, _scores(estimator, _safe_indexing(X, test), n_classes)))
            self.fallback_scores_ = np.array(
                [
                    _cross_validated_brier(self.method, [s for _, s in c], splits, y_encoded, weights, n_classes)
                    for c in (supervised, semi)
                ]
            )
            # Ties keep the semi-supervised model: only held-out labels that prefer the supervised one replace it.
            self.fell_back_ = bool(self.fallback_scores_[0] < self.fallback_scores_[1])
            if self.fell_back_:
                chosen = supervised

        if self.ensemble:
            self.calibrated_classifiers_ = [
                _CalibratedFold(
                    est,
                    _fit_calibrators(self.method, scores, y_encoded[test], weights[test], n_classes),
                    n_classes,
                )
                for (est, scores), test in zip(chosen, splits)
            ]
        else:
            test = np.concatenate(splits)
            scores = np.vstack([s for _, s in chosen])
            calibrators = _fit_calibrators(self.method, scores, y_encoded[test], weights[test], n_classes)
            if self.fell_back_:
                rows = np.flatnonzero(labeled)
                final = _fit_supervised(fallback, X, y_encoded, weights, rows, sample_weight is not None)
            else:
                final = clone(base).fit(X, y, **fit_params)
            self.calibrated_classifiers_ = [_CalibratedFold(final, calibrators, n_classes)]

        predicted = np.zeros(y.shape[0], dtype=np.intp)
        unlabeled = np.flatnonzero(~labeled)
        if unlabeled.size:
            predicted[unlabeled] = self._proba(_safe_indexing(X, unlabeled)).argmax(axis=1)
        self._set_transduction(y_encoded, predicted)
        return self

    def _proba(self, X):
        proba = np.mean([fold.predict_proba(X) for fold in self.calibrated_classifiers_], axis=0)
        return proba

    def predict_proba(self, X):
        """Calibrated class probabilities, columns in the order of ``classes_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Class probabilities; each row sums to 1.
        """
        check_is_fitted(self, "calibrated_classifiers_")
        return self._proba(check_sparse_structure(X))

    def predict(self, X):
        """The most probable class of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        return self._decode(self.predict_proba(X).argmax(axis=1))

    def _first_estimator_attribute(self, name):
        try:
            check_is_fitted(self, "calibrated_classifiers_")
        except NotFittedError as exc:
            raise AttributeError(f"{type(self).__name__} is not fitted yet; it has no {name}.") from exc
        return getattr(self.calibrated_classifiers_[0].estimator, name)

    @property
    def n_features_in_(self):
        """Number of features seen during ``fit`` (that of the first fitted estimator)."""
        return self._first_estimator_attribute("n_features_in_")

    @property
    def feature_names_in_(self):
        """Names of the features seen during ``fit`` (those of the first fitted estimator)."""
        return self._first_estimator_attribute("feature_names_in_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self._base_estimator()).input_tags
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.allow_nan = inner.allow_nan
        return tags
