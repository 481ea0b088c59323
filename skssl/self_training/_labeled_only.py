"""A supervised baseline that fits any classifier on the labeled rows only.

A bare scikit-learn classifier learns ``-1`` as a class; wrapped in
:class:`LabeledOnlyClassifier` it sees the labeled rows only and takes the
same ``X, y`` and splitters as skssl's semi-supervised estimators.

Design decisions: user guide, Implementation decisions (deep, self-training), "The labeled-only baseline".
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils import _safe_indexing, get_tags, indexable
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metadata_routing import (
    UNUSED,
    _raise_for_params,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.validation import _check_method_params, _check_sample_weight, check_is_fitted, has_fit_parameter

from ..base import SemiSupervisedClassifierMixin, _as_1d_target, encode_semi_supervised_target
from ..utils._fit_state import publish_fitted, working_copy
from ..utils.validation import check_sparse_structure
from ._delegation import (
    delegated_predictions,
    estimator_routing,
    fill_doc,
    fitted_estimator_attribute,
    meta_fit,
)

__all__ = ["LabeledOnlyClassifier"]


def _estimator_has(attr):
    """Check ``attr`` on the fitted ``estimator_``, else on the unfitted ``estimator``."""

    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


@fill_doc
class LabeledOnlyClassifier(SemiSupervisedClassifierMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Fit any classifier on the labeled rows only: the fair supervised baseline.

    ``fit(X, y)`` drops the rows with ``y == -1`` and fits a clone of
    ``estimator`` on the rest, where a bare classifier would learn ``-1``.

    Parameters
    ----------
    estimator : estimator object
        A classifier with ``fit`` and ``predict``; it is cloned.

    Attributes
    ----------
    estimator_ : estimator object
        The clone of ``estimator`` fitted on the labeled rows.
    classes_ : ndarray of shape (n_classes,)
        The labeled classes; ``-1`` is never one of them.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (predicted for the unlabeled ones).
    %(features_in)s

    See Also
    --------
    CurriculumLabelingClassifier : Self-training around any classifier; its
        first round is this baseline.
    skssl.model_selection.SemiSupervisedKFold : Cross-validation with unlabeled rows.
    skssl.base.UnlabeledAsClassWarning : Emitted when a bare classifier learned ``-1``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skssl.datasets import make_semi_supervised
    >>> from skssl.model_selection import SemiSupervisedKFold
    >>> from skssl.self_training import LabeledOnlyClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> y_semi = make_semi_supervised(y, 0.2, random_state=0)
    >>> baseline = make_pipeline(StandardScaler(), LabeledOnlyClassifier(LogisticRegression(max_iter=1000)))
    >>> scores = cross_val_score(baseline, X, y_semi, cv=SemiSupervisedKFold(3))
    >>> bool(scores.mean() > 0.85)
    True
    """

    _parameter_constraints: dict = {"estimator": [HasMethods(["fit", "predict"])]}

    _uses_unlabeled_rows = False

    __metadata_request__fit = {"sample_weight": UNUSED}

    def __init__(self, estimator):
        self.estimator = estimator

    @meta_fit
    def fit(self, X, y, sample_weight=None, **params):
        """Fit a clone of ``estimator`` on the rows with ``y != -1``.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights for the wrapped estimator's ``fit``, cut to the labeled rows.
        **params : dict
            Further fit parameters, only with metadata routing enabled; per-row
            ones are cut to the labeled rows.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            If fewer than two classes are labeled, ``sample_weight`` cannot be
            passed, or a precomputed kernel meets unlabeled rows.
        """
        work = working_copy(self)
        work._fit_labeled(X, y, sample_weight, params)
        return publish_fitted(self, work)

    def _fit_labeled(self, X, y, sample_weight, params):
        """The body of :meth:`fit`, on the working copy."""
        _raise_for_params(params, self, "fit")
        y = _as_1d_target(y)
        X, y = indexable(check_sparse_structure(X), y)
        self.classes_, y_encoded, labeled = encode_semi_supervised_target(y, warn_no_unlabeled=False)
        rows = np.flatnonzero(labeled)
        all_labeled = rows.shape[0] == y.shape[0]
        if not all_labeled and get_tags(self.estimator).input_tags.pairwise:
            raise ValueError(
                f"{type(self.estimator).__name__} takes a precomputed (pairwise) X, whose columns are "
                "samples too; LabeledOnlyClassifier selects rows only. Fit the estimator yourself on "
                "the labeled block of the kernel, X[labeled][:, labeled]."
            )

        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if _routing_enabled():
            if sample_weight is not None:
                params = {**params, "sample_weight": sample_weight}
            fit_params = process_routing(self, "fit", **params).estimator.fit
        else:
            fit_params = {}
            if sample_weight is not None:
                if not has_fit_parameter(self.estimator, "sample_weight"):
                    raise ValueError(
                        f"sample_weight was given but {type(self.estimator).__name__}.fit does not take sample_weight."
                    )
                fit_params = {"sample_weight": sample_weight}

        self.estimator_ = clone(self.estimator)
        y_fit = self._decode(y_encoded[rows])
        if all_labeled:
            self.estimator_.fit(X, y_fit, **fit_params)
        else:
            fit_params = _check_method_params(X, fit_params, indices=rows)
            self.estimator_.fit(_safe_indexing(X, rows), y_fit, **fit_params)

        transduction = self._decode(np.where(labeled, y_encoded, 0))
        if not all_labeled:
            transduction[~labeled] = self.estimator_.predict(_safe_indexing(X, np.flatnonzero(~labeled)))
        self.transduction_ = transduction
        return self

    def _routed(self, method, params):
        """The routed parameters of ``estimator_.<method>``."""
        check_is_fitted(self, "estimator_")
        _raise_for_params(params, self, method)
        if _routing_enabled():
            return getattr(process_routing(self, method, **params).estimator, method)
        return {}

    def predict(self, X, **params):
        """Predict the class of each row of ``X`` with ``estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, ...)
            Rows to classify, in any form the wrapped estimator takes.
        **params : dict
            Parameters for ``estimator_.predict`` (metadata routing only).

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        return self._delegate("predict", X, params)

    def _delegate(self, method, X, params):
        """``estimator_.<method>`` on ``X``, with the routed ``params``."""
        routed = self._routed(method, params)
        return getattr(self.estimator_, method)(check_sparse_structure(X), **routed)

    predict_proba, predict_log_proba, decision_function = delegated_predictions(
        "LabeledOnlyClassifier",
        _estimator_has,
        x_shape="(n_samples, ...)",
        params_doc="Parameters for ``estimator_.{method}``, only with metadata routing enabled.",
    )

    @property
    def n_features_in_(self):
        """Number of features seen during ``fit`` (that of ``estimator_``)."""
        return fitted_estimator_attribute(self, "n_features_in_", "estimator_")

    @property
    def feature_names_in_(self):
        """Names of the features seen during ``fit`` (those of ``estimator_``)."""
        return fitted_estimator_attribute(self, "feature_names_in_", "estimator_")

    def get_metadata_routing(self):
        """Get the metadata routing of this object.

        Each method routes to the wrapped estimator's method of the same name.

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter`
            encapsulating the routing information.
        """
        return estimator_routing(self, self.estimator)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator).input_tags
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.pairwise = inner.pairwise
        return tags
