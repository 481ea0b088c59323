"""Parameters of the skssl nets: merged signatures, nested parameter objects, validation.

A subclass's ``__init__`` names only what it adds or changes; the merged
signature lets ``get_params``, ``clone`` and the docs see every parameter.
Parameter objects take nested ``set_params`` (``masking__threshold``).
"""

import inspect

from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import validate_parameter_constraints
from skorch import NeuralNetClassifier

__all__ = ["NetParamsMixin", "clone_param", "merged_signature"]


def clone_param(obj):
    """scikit-learn's ``clone`` for parameter objects; a deep copy for other callables."""
    return clone(obj, safe=False)


def merged_signature(cls):
    """``cls.__init__``'s parameters merged into its parent's: positional, added, keyword-only, ``**kwargs``."""
    parent = inspect.signature(super(cls, cls).__init__)
    own = inspect.signature(cls.__dict__["__init__"]).parameters
    positional, keyword, var_kw = [], [], []
    for p in parent.parameters.values():
        p = p.replace(default=own[p.name].default) if p.name in own else p
        kind_list = {p.VAR_KEYWORD: var_kw, p.KEYWORD_ONLY: keyword}.get(p.kind, positional)
        kind_list.append(p)
    known = set(parent.parameters)
    added = [p.replace(kind=p.KEYWORD_ONLY) for p in own.values() if p.name not in known and p.kind != p.VAR_KEYWORD]
    return parent.replace(parameters=positional + added + keyword + var_kw)


class NetParamsMixin:
    """Parameter handling of :class:`~skssl.deep._base.BaseNet`."""

    _parameter_objects = ()

    __repr__ = BaseEstimator.__repr__

    def _get_param_names(self):
        # signature names, routed "prefix__name" ones and extra skorch keywords
        names = set(BaseEstimator._get_param_names.__func__(type(self)))
        extra = getattr(self, "_params_to_validate", set())
        for key in self.__dict__:
            if not key.startswith("_") and not key.endswith("_") and ("__" in key or key in extra):
                names.add(key)
        return sorted(names)

    def set_params(self, **params):
        """Set parameters: plain ones, skorch's routed ones and nested ones of parameter objects.

        ``masking__threshold=0.9`` sets the masking policy's parameter (the
        default policy on ``masking=None``); ``module__*`` ... go the skorch way.

        Parameters
        ----------
        **params : dict
            Parameter names and values.

        Returns
        -------
        self : object
            This net.
        """
        if not self.__dict__.get("initialized_", False) and "callbacks" in params:
            self.callbacks = params.pop("callbacks")
        nested = {}
        for key in [k for k in params if k.partition("__")[0] in self._parameter_objects and "__" in k]:
            head, _, sub = key.partition("__")
            nested.setdefault(head, {})[sub] = params.pop(key)
        super().set_params(**params)
        for head, sub_params in nested.items():
            obj = getattr(self, head)
            if obj is None:
                obj = self._default_parameter_object(head)
                setattr(self, head, obj)
            if not hasattr(obj, "set_params"):
                raise ValueError(f"{head}={obj!r} has no set_params, so {sorted(sub_params)} cannot be set on it.")
            obj.set_params(**sub_params)
        return self

    def _default_parameter_object(self, name):
        raise ValueError(
            f"{name} is None, so its default is chosen from X at fit time; pass an object "
            f"(e.g. {name}=GaussianNoise()) to set its parameters."
        )

    def _validate_params(self):
        # skorch's check needs the prefixes that initialize() registers
        validate_parameter_constraints(
            self._parameter_constraints, self.get_params(deep=False), caller_name=type(self).__name__
        )
        if "optimizer_" in self.__dict__:
            NeuralNetClassifier._validate_params(self)
