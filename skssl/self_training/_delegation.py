"""What the meta-estimators of :mod:`skssl.self_training` hand on to the estimator they fitted.

:class:`~skssl.self_training.CurriculumLabelingClassifier` and
:class:`~skssl.self_training.LabeledOnlyClassifier` answer ``predict_proba``,
``predict_log_proba`` and ``decision_function`` with the same method of
``estimator_``, and read ``n_features_in_`` and ``feature_names_in_`` from
it. Those methods and their docstrings are built here, once for both.
"""

import textwrap

from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

#: Summary and Returns entry of each prediction method handed on to ``estimator_``.
_PREDICTIONS = {
    "predict_proba": (
        "Class probabilities of ``estimator_``, columns in the order of ``classes_``.",
        "proba : ndarray of shape (n_samples, n_classes)",
        "Class probabilities.",
    ),
    "predict_log_proba": (
        "Log class probabilities of ``estimator_``, columns in the order of ``classes_``.",
        "log_proba : ndarray of shape (n_samples, n_classes)",
        "Log class probabilities.",
    ),
    "decision_function": (
        "Decision function of ``estimator_`` (for two classes, positive means ``classes_[1]``).",
        "scores : ndarray of shape (n_samples,) or (n_samples, n_classes)",
        "Decision values.",
    ),
}


def delegated_predictions(owner, estimator_has, *, x_shape, params_doc):
    """``predict_proba``, ``predict_log_proba`` and ``decision_function`` of a meta-estimator, with their docstrings.

    Each returns ``self._delegate(name, X, params)``, where the class checks
    ``X``, routes ``params`` and calls the method of ``estimator_``; each
    exists when ``estimator_has(name)(self)`` holds (see
    :func:`~sklearn.utils.metaestimators.available_if`).

    Parameters
    ----------
    owner : str
        Name of the class the methods belong to.
    estimator_has : callable
        ``estimator_has(name)`` returns the availability check of the method ``name``.
    x_shape : str
        The shape documented for ``X``.
    params_doc : str
        What ``**params`` are; ``{method}`` stands for the method's name.

    Returns
    -------
    methods : tuple
        The three methods, in the order above, for the class body.
    """
    return tuple(_delegated_prediction(owner, name, estimator_has(name), x_shape, params_doc) for name in _PREDICTIONS)


def _delegated_prediction(owner, name, available, x_shape, params_doc):
    """One method of :func:`delegated_predictions`."""

    def method(self, X, **params):
        return self._delegate(name, X, params)

    summary, returns, returns_doc = _PREDICTIONS[name]
    indent = " " * 12
    params_text = textwrap.fill(
        params_doc.format(method=name), width=80, initial_indent=indent, subsequent_indent=indent
    )
    method.__name__ = name
    method.__qualname__ = f"{owner}.{name}"
    method.__doc__ = f"""{summary}

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape {x_shape}
            Rows to score.
        **params : dict
{params_text}

        Returns
        -------
        {returns}
            {returns_doc}
        """
    return available_if(available)(method)


def fitted_estimator_attribute(meta, name, attributes=None):
    """``meta.estimator_.<name>``; an ``AttributeError`` (so ``hasattr`` is False) before ``fit``.

    Parameters
    ----------
    meta : estimator instance
        The meta-estimator.
    name : str
        The attribute of ``estimator_``.
    attributes : str, default=None
        The attribute :func:`~sklearn.utils.validation.check_is_fitted` looks
        for (``None``: any fitted attribute).

    Returns
    -------
    value : object
    """
    try:
        check_is_fitted(meta, attributes)
    except NotFittedError as exc:
        raise AttributeError(f"{type(meta).__name__} is not fitted yet; it has no {name}.") from exc
    return getattr(meta.estimator_, name)
