"""The supervised baseline: skssl's default nets trained on the labeled rows only.

Design decisions (the default epoch length): user guide, Implementation
decisions (deep), "Defaults sized for a CPU".
"""

import math
from numbers import Integral

from sklearn.utils._param_validation import Interval, StrOptions

from skorch.utils import to_tensor

from ._augment import default_augmentations
from ._base import BaseNet

__all__ = ["SupervisedNetClassifier", "default_steps_per_epoch"]

_MIN_STEPS = 10
_MAX_PASSES = 3


def default_steps_per_epoch(n_labeled, batch_size):
    """Steps of an epoch with ``iterations_per_epoch=None``.

    One pass over the labeled rows and at least 10 steps, but at most 3
    passes: ``max(ceil(n / b), min(10, ceil(3 n / b)))``.

    Parameters
    ----------
    n_labeled : int
        Labeled rows of the fit.
    batch_size : int
        Rows per step.

    Returns
    -------
    steps : int
        Steps per epoch, at least 1.
    """
    one_pass = math.ceil(n_labeled / batch_size)
    return max(one_pass, min(_MIN_STEPS, math.ceil(_MAX_PASSES * n_labeled / batch_size)), 1)


class SupervisedNetClassifier(BaseNet):
    """Plain supervised skorch classifier with skssl's default modules.

    The labeled-only baseline and the default estimator of
    :class:`~skssl.self_training.CurriculumLabelingClassifier`; rows with
    ``y == -1`` are ignored by the fit and by ``score``.

    Parameters
    ----------
    %(module)s
    augment : callable, "weak" or None, default=None
        Augmentation of the training batches: none, the semi-supervised nets'
        weak one, or a callable on torch batches.
    %(net_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labeled classes, sorted; never -1.
    transduction_ : ndarray of shape (n_samples,)
        Label of each training row (the prediction for the unlabeled ones).
    n_features_in_ : int
        ``X.shape[1]`` at fit time.
    input_shape_ : tuple of int
        ``X.shape[1:]`` at fit time.
    augment_ : callable or None
        The fitted clone of the augmentation.
    module_ : torch module
        The trained module.
    history_ : skorch History
        skorch's per-epoch and per-batch records.

    See Also
    --------
    FixMatchClassifier : Uses the unlabeled rows through pseudo-labels.
    FreeMatchClassifier : Self-adaptive thresholds.
    AdshClassifier : Class-adaptive thresholds for imbalanced classes.

    References
    ----------
    M. Tietz, T. J. Fan, D. Nouri, B. Bossan and skorch Developers. "skorch:
    A scikit-learn compatible neural network library that wraps PyTorch".
    Software, 2017.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from skssl.deep import SupervisedNetClassifier
    >>> X, y = make_blobs(100, centers=2, random_state=0)
    >>> clf = SupervisedNetClassifier(max_epochs=5, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _uses_unlabeled_rows = False
    _parameter_objects = ("augment",)

    _parameter_constraints: dict = {
        **BaseNet._parameter_constraints,
        "augment": [callable, StrOptions({"weak"}), None],
        "iterations_per_epoch": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, module=None, *, augment=None, iterations_per_epoch=None, max_epochs=30, batch_size=64, **kwargs):
        super().__init__(
            module, iterations_per_epoch=iterations_per_epoch, max_epochs=max_epochs, batch_size=batch_size, **kwargs
        )
        self.augment = augment

    def _steps_per_epoch(self, n_labeled):
        if self.iterations_per_epoch is None:
            return default_steps_per_epoch(n_labeled, self.batch_size)
        return self.iterations_per_epoch

    def _start_fit(self, X, y_enc, mask, reset, seed):
        if reset or not hasattr(self, "augment_"):
            X_lab = X[mask]
            weak, _ = default_augmentations(X.ndim, X.shape[1] if X.ndim == 2 else None)
            aug = None if self.augment is None else weak if self.augment == "weak" else self.augment
            self.augment_ = None if aug is None else self._fit_augmentation(aug, weak, X_lab)

    def train_step_single(self, batch, **fit_params):
        self._set_training(True)
        Xi, yi, weight = self._split_batch(batch)
        X_loss = Xi if weight is None else {"X": Xi, "sample_weight": weight}
        if self.augment_ is not None:
            Xi = self._augment(self.augment_, to_tensor(Xi, device=self.device))
        logits = self.infer(Xi, **fit_params)
        loss = self.get_loss(logits, yi, X=X_loss, training=True)
        loss.backward()
        return {"loss": loss, "y_pred": logits}
