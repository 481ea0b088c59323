"""What the meta-estimators of :mod:`skssl.self_training` share.

The prediction methods handed on to ``estimator_`` with their docstrings,
the ``fit`` decorator, the metadata routing to the wrapped estimator and
the docstring blocks both document alike.
"""

import textwrap

from sklearn.base import _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import insert_blocks


_BLOCKS = {
    "fit_parameters": """\
Parameters
----------
X : {array-like, sparse matrix} of shape (n_samples, ...)
    Training data in any form the wrapped estimator takes.
y : array-like of shape (n_samples,)
    Labels, ``-1`` for unlabeled rows.""",
    "features_in": """\
n_features_in_ : int
    Number of features seen during ``fit`` (from ``estimator_``, if it has it).
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during ``fit`` (from ``estimator_``).""",
}


def fill_doc(obj):
    """Decorator: replace each ``%(name)s`` line of ``obj.__doc__`` with the block ``name``."""
    obj.__doc__ = insert_blocks(obj.__doc__, _BLOCKS)
    return obj


def meta_fit(fit):
    """Decorator of the meta-estimators' ``fit``: the shared docstring text and sklearn's fit context."""
    return _fit_context(prefer_skip_nested_validation=False)(fill_doc(fit))


def estimator_routing(meta, estimator, fit_callees=("fit",)):
    """Routing of ``meta`` to ``estimator``: ``fit`` to ``fit_callees``, each prediction method to itself."""
    mapping = MethodMapping()
    for callee in fit_callees:
        mapping.add(caller="fit", callee=callee)
    for method in ("predict", *_PREDICTIONS):
        mapping.add(caller=method, callee=method)
    return MetadataRouter(owner=meta).add_self_request(meta).add(estimator=estimator, method_mapping=mapping)


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
    """``predict_proba``, ``predict_log_proba`` and ``decision_function`` calling ``self._delegate``.

    Each exists when ``estimator_has(name)(self)``; ``{method}`` in ``params_doc`` is its name.
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
    """``meta.estimator_.<name>``; an ``AttributeError`` before ``fit`` (so ``hasattr`` is False)."""
    try:
        check_is_fitted(meta, attributes)
    except NotFittedError as exc:
        raise AttributeError(f"{type(meta).__name__} is not fitted yet; it has no {name}.") from exc
    return getattr(meta.estimator_, name)
