"""A supervised baseline that fits any classifier on the labeled rows only.

A scikit-learn classifier fitted on a semi-supervised ``y`` learns ``-1`` as a
class of its own and, with most rows unlabeled, predicts it almost
everywhere. :class:`LabeledOnlyClassifier` wraps the classifier so that it
sees the rows with ``y != -1`` only (their labels as given), and so takes the
same ``X, y``, ``Pipeline``, ``GridSearchCV`` and splitters as skssl's
semi-supervised estimators: the fair supervised baseline to compare them
with. ``sample_weight`` and routed per-row fit parameters are cut to the
labeled rows; ``transduction_`` and ``score`` are those of the other skssl
estimators.

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

    ``fit(X, y)`` takes a semi-supervised target (``y == -1`` marks unlabeled
    rows), drops the unlabeled rows and fits a clone of ``estimator`` on the
    rest. The wrapper therefore drops into the same ``Pipeline``,
    ``GridSearchCV`` and :class:`~skssl.model_selection.SemiSupervisedKFold`
    as skssl's semi-supervised estimators, where a bare scikit-learn
    classifier would learn ``-1`` as a class.

    Parameters
    ----------
    estimator : estimator object
        A classifier with ``fit`` and ``predict`` (a ``Pipeline`` ending in
        one works too). It is cloned; the clone is ``estimator_``.

    Attributes
    ----------
    estimator_ : estimator object
        The clone of ``estimator`` fitted on the labeled rows.
    classes_ : ndarray of shape (n_classes,)
        The labeled classes; ``-1`` is never one of them.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: the given label for labeled rows,
        ``estimator_``'s prediction for unlabeled ones.
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

    # A supervised model: a y without -1 is its normal input, not a reason to warn.
    _uses_unlabeled_rows = False

    # fit only selects the rows of sample_weight; the wrapped estimator consumes it (routing).
    __metadata_request__fit = {"sample_weight": UNUSED}

    def __init__(self, estimator):
        self.estimator = estimator

    @meta_fit
    def fit(self, X, y, sample_weight=None, **params):
        """Fit a clone of ``estimator`` on the rows with ``y != -1``.

        %(fit_parameters)s
            String labels come in an ``object`` array with the integer ``-1``
            as the sentinel.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, restricted to the labeled rows and passed to the
            wrapped estimator's ``fit`` (under metadata routing, only if it
            requested them).
        **params : dict
            Further fit parameters for the wrapped estimator, only with
            ``sklearn.set_config(enable_metadata_routing=True)``; those with
            one entry per row of ``X`` are restricted to the labeled rows.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            If no row is labeled, if the labeled rows hold one class only, if
            ``sample_weight`` is given to an estimator whose ``fit`` takes
            none, or if a precomputed-kernel estimator meets unlabeled rows.
        """
        # On a working copy, its attributes stored at the end: a fit of this object in another thread cannot swap
        # estimator_ or classes_ under this one (skssl.utils._fit_state).
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
        """The parameters of ``estimator_.<method>``, routed or (without routing) none."""
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
            Parameters for ``estimator_.predict``, only with metadata routing
            enabled.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        return self._delegate("predict", X, params)

    def _delegate(self, method, X, params):
        """``estimator_.<method>`` on ``X``, with the routed ``params``."""
        routed = self._routed(method, params)  # checks that the estimator is fitted
        return getattr(self.estimator_, method)(check_sparse_structure(X), **routed)

    # predict_proba, predict_log_proba and decision_function return those of estimator_ (through _delegate).
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

        ``fit``'s ``sample_weight`` and routed fit parameters go to the wrapped
        estimator (restricted to the labeled rows); the prediction methods'
        parameters go to the same methods of the wrapped estimator; ``score``
        consumes its own ``sample_weight``.

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
        # Only rows of X are selected here: X's form is the wrapped estimator's business.
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.pairwise = inner.pairwise
        return tags
