"""What the meta-estimators of :mod:`skssl.self_training` hand on to the estimator they fitted.

:class:`~skssl.self_training.CurriculumLabelingClassifier` and
:class:`~skssl.self_training.LabeledOnlyClassifier` answer ``predict_proba``,
``predict_log_proba`` and ``decision_function`` with the same method of
``estimator_``, and read ``n_features_in_`` and ``feature_names_in_`` from
it. Those methods and their docstrings are built here, once for both, with
what else the two share: the ``fit`` decorator (:func:`meta_fit`), the
metadata routing to the wrapped estimator (:func:`estimator_routing`) and
the text of the ``fit`` parameters and fitted attributes they document
alike (:func:`fill_doc`).
"""

import textwrap

from sklearn.base import _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..utils._docstrings import insert_blocks


#: Docstring text both meta-estimators use, by placeholder name (see :func:`fill_doc`).
_BLOCKS = {
    "fit_parameters": """\
Parameters
----------
X : {array-like, sparse matrix} of shape (n_samples, ...)
    Training data in any form the wrapped estimator takes (sparse
    matrices, 4-D image arrays, lists of texts for a pipeline);
    only its rows are selected here.
y : array-like of shape (n_samples,)
    Labels, ``-1`` for unlabeled rows.""",
    "features_in": """\
n_features_in_ : int
    Number of features seen during ``fit``, read from ``estimator_`` (absent
    when the wrapped estimator does not define it, e.g. a text pipeline).
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during ``fit``, when ``X`` has string column
    names, read from ``estimator_``.""",
}


def fill_doc(obj):
    """Decorator: put the shared text into the docstring of a class or function.

    Each ``%(name)s`` of ``obj.__doc__`` standing alone on a line is replaced
    by the block ``name`` of this module, indented like the placeholder.

    Parameters
    ----------
    obj : class or function
        What the docstring belongs to.

    Returns
    -------
    obj : class or function
        ``obj``, its docstring filled in.
    """
    obj.__doc__ = insert_blocks(obj.__doc__, _BLOCKS)
    return obj


def meta_fit(fit):
    """Decorator of both meta-estimators' ``fit``: its shared docstring text and scikit-learn's fit context.

    The meta-estimator's own parameters are validated; the wrapped
    estimator is validated by its own ``fit`` (nested validation is not
    skipped).

    Parameters
    ----------
    fit : function
        The ``fit`` method.

    Returns
    -------
    fit : function
        The decorated method.
    """
    return _fit_context(prefer_skip_nested_validation=False)(fill_doc(fit))


def estimator_routing(meta, estimator, fit_callees=("fit",)):
    """The metadata routing of a meta-estimator to the estimator it wraps.

    ``fit`` routes to the methods ``fit_callees`` of ``estimator``, and
    ``predict`` and the methods of :func:`delegated_predictions` each to the
    same method; the meta-estimator's own requests (``score``'s
    ``sample_weight``) are added.

    Parameters
    ----------
    meta : estimator instance
        The meta-estimator.
    estimator : estimator instance
        The estimator it wraps.
    fit_callees : tuple of str, default=("fit",)
        The methods of ``estimator`` that ``fit`` routes to.

    Returns
    -------
    routing : MetadataRouter
        The routing, for ``meta.get_metadata_routing()``.
    """
    mapping = MethodMapping()
    for callee in fit_callees:
        mapping.add(caller="fit", callee=callee)
    for method in ("predict", *_PREDICTIONS):
        mapping.add(caller=method, callee=method)
    return MetadataRouter(owner=meta).add_self_request(meta).add(estimator=estimator, method_mapping=mapping)


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
