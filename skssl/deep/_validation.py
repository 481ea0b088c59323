"""Input checks of the skssl nets: ``X`` and ``y`` for fit and predict, and the module's output.

Data and labels (the skorch traps)
    ``y`` goes through :mod:`skssl.base` (one encoding path for ``fit`` and
    ``partial_fit``); skorch only ever sees the labeled rows and their class
    indices, so ``classes_`` never holds -1 and ``predict`` maps indices back
    to labels; a user ``train_split`` only sees labeled rows. Inputs are cast
    to float32; 2-D ``X`` gets the default MLP, 4-D ``X`` the default CNN, any
    other dimensionality raises. A read-only array (the values of a pandas
    DataFrame can be one) is copied, since torch shares the arrays' memory and
    cannot keep them read-only. Sparse input is refused (a net densifies
    every batch anyway; pass ``X.toarray()`` deliberately). Every source of
    randomness is seeded from ``random_state`` through generators of the
    fit's own (:mod:`skssl.deep._random`), so the caller's global torch
    generator is left as it was.

"""

import numpy as np
import torch
from sklearn.utils.validation import _check_sample_weight, check_consistent_length, check_is_fitted, validate_data
from skorch.utils import to_tensor

from ..base import _as_1d_target, encode_semi_supervised_target

__all__ = ["NetDataMixin"]


def _writable(a):
    """``a``, or a copy of it when it is read-only.

    torch shares the memory of the arrays it is given and warns on a read-only
    one (torch cannot mark a tensor read-only); a pandas DataFrame's values
    can be such a read-only view. The caller's data is never written to.
    """
    return a if a is None or a.flags.writeable else a.copy()


class NetDataMixin:
    """Data checks of :class:`~skssl.deep._base.BaseNet` (see the module docstring)."""

    def _check_ndim(self, X):
        if X.ndim not in (2, 4):
            raise ValueError(
                f"X must be 2-D (n_samples, n_features) or 4-D images (n_samples, channels, "
                f"height, width); got a {X.ndim}-D array of shape {np.shape(X)}."
            )

    def _encode_like_fit(self, y):
        """Encode ``y`` against the ``classes_`` of the first fit (``partial_fit``)."""
        classes, y_enc, mask = encode_semi_supervised_target(y, warn_no_unlabeled=self._uses_unlabeled_rows)
        pos = np.minimum(np.searchsorted(self.classes_, classes), len(self.classes_) - 1)
        if np.any(self.classes_[pos] != classes):
            raise ValueError(
                f"y holds labels {sorted(set(classes.tolist()) - set(self.classes_.tolist()))} not seen in "
                f"the first fit (classes_ = {self.classes_})."
            )
        return np.where(mask, pos[np.maximum(y_enc, 0)], -1), mask

    def _validate_fit_data(self, X, y, sample_weight, reset):
        """Validated float32 ``X``, encoded ``y``, labeled mask and weights (or None)."""
        if reset:
            X, y_enc, mask = self._validate_semi_supervised_data(
                X, y, accept_sparse=False, dtype=np.float32, allow_nd=True
            )
        else:
            X = self._validate_predict_X(X)
            y = _as_1d_target(y)
            check_consistent_length(X, y)
            y_enc, mask = self._encode_like_fit(y)
        self._check_ndim(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float32, ensure_non_negative=True)
            if not sample_weight[mask].sum() > 0:
                raise ValueError("sample_weight is zero for every labeled row; there is nothing to fit.")
        return _writable(np.ascontiguousarray(X, dtype=np.float32)), y_enc, mask, _writable(sample_weight)

    def _validate_predict_X(self, X):
        check_is_fitted(self, "input_shape_")
        if len(self.input_shape_) == 3:
            # images: name the shapes before scikit-learn's "n features" message on the channels
            shape = tuple(np.asarray(X).shape[1:])
            if shape != tuple(self.input_shape_):
                raise ValueError(
                    f"X has rows of shape {shape}, but {type(self).__name__} was fitted on images "
                    f"of shape {tuple(self.input_shape_)} (channels, height, width)."
                )
        X = validate_data(self, X, reset=False, dtype=np.float32, allow_nd=True)
        self._check_ndim(X)
        if tuple(X.shape[1:]) != tuple(self.input_shape_):
            raise ValueError(
                f"X has rows of shape {tuple(X.shape[1:])}, but {type(self).__name__} was fitted on "
                f"rows of shape {tuple(self.input_shape_)}."
            )
        return _writable(X)

    def _check_module_accepts(self, X):
        module = self.module_
        was_training = module.training
        module.eval()
        try:
            with torch.no_grad():
                out = module(to_tensor(X[:2], device=self.device))
        except (RuntimeError, ValueError) as exc:
            raise ValueError(
                f"The module cannot take inputs of shape {tuple(X.shape[1:])} (a batch of shape "
                f"{tuple(X[:2].shape)} failed): {exc}"
            ) from exc
        finally:
            module.train(was_training)
        out = out[0] if isinstance(out, (tuple, list)) else out
        if out.ndim != 2 or out.shape[1] != len(self.classes_):
            raise ValueError(
                f"The module must return logits of shape (n_samples, {len(self.classes_)}); it "
                f"returned shape {tuple(out.shape)}."
            )

    @property
    def classes_(self):
        try:
            return self.__dict__["_fitted_classes"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no attribute 'classes_' before fit.") from None

    @classes_.setter
    def classes_(self, value):
        self.__dict__["_fitted_classes"] = value
