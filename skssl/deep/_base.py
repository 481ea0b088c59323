"""The base of every skssl net: skorch plumbing, the shared fit and prediction.

:class:`BaseNet` sits between skorch's ``NeuralNetClassifier`` and the
semi-supervised and supervised nets. Parameters are handled in
:mod:`skssl.deep._params`, input checks in :mod:`skssl.deep._validation`.
Design decisions: user guide, Implementation decisions (deep), "Deep nets".
"""

from abc import ABCMeta, abstractmethod
import contextlib
import types
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval
from skorch import NeuralNetClassifier
from skorch.callbacks import EpochScoring, PrintLog
from skorch.dataset import Dataset, unpack_data
from skorch.utils import to_tensor
from torch.utils.data import DataLoader

from ..base import SemiSupervisedClassifierMixin
from ._docs import fill_doc, inherit_method_docs
from ._losses import weighted_mean
from ._modules import MLPModule, SmallCNN, default_module_for
from ._parallel import ParallelFit, no_parallel
from ._progress import ProgressLog
from ._params import NetParamsMixin, clone_param, merged_signature
from ._random import FitRandomness, check_device, seed_from
from ._samplers import EndlessSampler
from ._threads import torch_threads
from ._validation import NetDataMixin

__all__ = ["BaseNet"]


def _encoded_accuracy(net, X, y):
    """Accuracy of ``argmax(predict_proba)`` against encoded targets."""
    return float(np.mean(np.argmax(net.predict_proba(X), axis=1) == np.asarray(y).reshape(-1)))


def _same_device(a, b):
    """Whether two torch devices are the same memory (all CPU indices are one)."""
    a, b = torch.device("cpu" if a is None else a), torch.device(b)
    return a.type == b.type and (a.type == "cpu" or (a.index or 0) == (b.index or 0))


def _no_print(*args, **kwargs):
    """Print sink of the non-zero processes of a data-parallel fit."""


#: modules initialised from the fit's generator; their forward draws nothing
_GENERATOR_MODULES = (MLPModule, SmallCNN)


class BaseNet(NetParamsMixin, NetDataMixin, SemiSupervisedClassifierMixin, NeuralNetClassifier, metaclass=ABCMeta):
    """Shared machinery of the skssl nets (not public)."""

    _parameter_constraints: dict = {
        "iterations_per_epoch": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), Interval(Integral, None, -1, closed="right"), None],
        "accelerator": [HasMethods(["wait_for_everyone"]), None],
    }

    # skorch's __init__ sets these fitted attributes, which scikit-learn's
    # check_no_attributes_set_in_init rejects: __init__ drops them to these defaults
    history_ = None
    initialized_ = False
    virtual_params_ = types.MappingProxyType({})
    _fit_rng = None  # the fit's random streams (skssl.deep._random)
    _parallel = no_parallel
    _constructor_params = frozenset()

    def __init__(
        self,
        module=None,
        *,
        iterations_per_epoch=50,
        random_state=None,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=40,
        batch_size=32,
        iterator_train=DataLoader,
        iterator_valid=DataLoader,
        dataset=None,
        train_split=None,
        callbacks=None,
        predict_nonlinearity="auto",
        warm_start=False,
        verbose=0,
        device="cpu",
        n_jobs=1,
        accelerator=None,
        **kwargs,
    ):
        super().__init__(
            module,
            criterion=criterion,
            optimizer=optimizer,
            lr=lr,
            max_epochs=max_epochs,
            batch_size=batch_size,
            iterator_train=iterator_train,
            iterator_valid=iterator_valid,
            dataset=dataset,
            train_split=train_split,
            callbacks=callbacks,
            predict_nonlinearity=predict_nonlinearity,
            warm_start=warm_start,
            verbose=verbose,
            device=device,
            **kwargs,
        )
        self.iterations_per_epoch = iterations_per_epoch
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.accelerator = accelerator
        for name in ("history_", "initialized_", "virtual_params_"):
            if not self.__dict__[name]:
                del self.__dict__[name]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__.__signature__ = merged_signature(cls)
        cls._constructor_params = frozenset(BaseEstimator._get_param_names.__func__(cls))
        fill_doc(cls)
        inherit_method_docs(cls, ("train_step_single",))

    def __setattr__(self, name, attr):
        # skorch refuses a torch module as attribute once ``initialized_`` exists,
        # which the class-level default makes always; constructor params stay plain
        if name in self._constructor_params:
            object.__setattr__(self, name, attr)
        else:
            super().__setattr__(name, attr)

    # --- skorch plumbing ---
    def get_dataset(self, X, y=None):
        """Wrap ``(X, y)`` in the skorch dataset.

        Parameters
        ----------
        X : array-like or dict
            Rows (a dict ``{"X": ..., "sample_weight": ...}`` with weights).
        y : array-like or None, default=None
            Encoded targets.

        Returns
        -------
        dataset : torch Dataset
            The dataset skorch iterates over.
        """
        if self.dataset is None:
            return Dataset(X, y, **self.get_params_for("dataset"))
        return super().get_dataset(X, y)

    def initialize_criterion(self):
        """Build the criterion, with ``reduction="none"`` unless told otherwise.

        Returns
        -------
        self : object
            This net, with ``criterion_`` set.
        """
        kwargs = self.get_params_for("criterion")
        if isinstance(self.criterion, type):
            kwargs = {"reduction": "none", **kwargs}
        self.criterion_ = self.initialized_instance(self.criterion, kwargs)
        return self

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """Return the criterion's loss, averaged over the rows with their ``sample_weight``.

        Parameters
        ----------
        y_pred : tensor of shape (n, n_classes)
            Logits.
        y_true : tensor of shape (n,)
            Encoded targets.
        X : tensor, dict or None, default=None
            The batch's rows, or ``{"X": ..., "sample_weight": ...}``.
        training : bool, default=False
            Whether the loss is for a training step.

        Returns
        -------
        loss : scalar tensor
            Mean of weight x per-row loss (plain mean without weights).
        """
        loss = super().get_loss(y_pred, y_true, X=X, training=training)
        weight = X.get("sample_weight") if isinstance(X, dict) else None
        if loss.ndim == 0:
            if weight is not None:
                raise ValueError(
                    "sample_weight needs per-row losses: keep the criterion's reduction='none' (the "
                    "nets' default); a criterion that averages the batch cannot weight its rows."
                )
            return loss
        return weighted_mean(loss, None if weight is None else to_tensor(weight, device=loss.device))

    def initialize_module(self):
        """Build the module; the default one is sized from the training data.

        A module instance is used as given (skorch's rule) unless
        ``module__*`` parameters are set; then a new one of its class is built.

        Returns
        -------
        self : object
            This net, with ``module_`` set.
        """
        kwargs = self.get_params_for("module")
        rng = self._fit_rng if self._fit_rng is not None else FitRandomness(seed_from(self.random_state), self.device)
        if self.module is None or self.module in _GENERATOR_MODULES:
            sizing = {}
            module_cls = self.module
            if module_cls is None:
                shape = getattr(self, "input_shape_", None)
                if shape is None:
                    raise ValueError("The default module is sized at fit time; call fit(X, y) first.")
                module_cls, sizing = default_module_for(shape, len(self.classes_))
            with torch.device("meta"):
                module = module_cls(**{**sizing, **kwargs})
            self.module_ = module.to_empty(device="cpu").reset_parameters(generator=rng.init)
            return self
        with rng.global_section():
            return super().initialize_module()

    def _module_section(self):
        """The fit's global-generator section for a user module (which may draw in ``forward``)."""
        rng = self._fit_rng
        if rng is None or type(self.module_) in _GENERATOR_MODULES:
            return contextlib.nullcontext()
        return rng.global_section()

    def infer(self, x, **fit_params):
        """Run the module on a batch (a user module with the fit's seeded global generator).

        Parameters
        ----------
        x : tensor, array or dict
            A batch of rows.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        y_infer : tensor
            The module's output.
        """
        with self._module_section():
            return super().infer(x, **fit_params)

    def _augment(self, aug, X):
        """``aug(X)`` with the fit's augmentation generator."""
        return self._fit_rng.augment_batch(aug, X)

    @property
    def _default_callbacks(self):
        # skorch's valid_acc compares user labels with encoded targets
        replace = {
            "valid_acc": EpochScoring(_encoded_accuracy, name="valid_acc", lower_is_better=False),
            "print_log": ProgressLog(keys_ignored=["thresholds"]),
        }
        return [(name, replace.get(name, cb)) for name, cb in super()._default_callbacks]

    def get_iterator(self, dataset, training=False):
        """Return skorch's data loader (the seeded endless sampler in training).

        Parameters
        ----------
        dataset : torch Dataset
            The labeled rows (training) or the rows to predict.
        training : bool, default=False
            Whether the loader is for training.

        Returns
        -------
        iterator : DataLoader
            Batches of ``dataset``.
        """
        iterator = self.iterator_train if training else self.iterator_valid
        kwargs = self.get_params_for("iterator_train" if training else "iterator_valid")
        if isinstance(iterator, type) and issubclass(iterator, DataLoader) and "generator" not in kwargs:
            rng = self._fit_rng
            kwargs["generator"] = rng.loader_generator() if rng is not None else torch.Generator()
        spec = getattr(self, "_labeled_sampler", None)
        if training and spec is not None and "sampler" not in kwargs and "batch_sampler" not in kwargs:
            kwargs.pop("shuffle", None)
            num_samples, seed = spec
            kwargs["sampler"] = EndlessSampler(len(dataset), num_samples, seed)
        batch_size = self._parallel.local_batch_size(self.batch_size) if training else self.batch_size
        kwargs.setdefault("batch_size", batch_size)
        if kwargs["batch_size"] == -1:
            kwargs["batch_size"] = len(dataset)
        return iterator(dataset, **kwargs)

    @staticmethod
    def _split_batch(batch):
        """``(X, y, sample_weight or None)`` of a batch."""
        Xi, yi = unpack_data(batch)
        if isinstance(Xi, dict):
            return Xi["X"], yi, Xi["sample_weight"]
        return Xi, yi, None

    def validation_step(self, batch, **fit_params):
        """Compute the validation loss of a batch.

        Parameters
        ----------
        batch : tuple
            A validation batch.
        **fit_params : dict
            Passed to the module.

        Returns
        -------
        step : dict
            ``loss`` and ``y_pred``, as skorch expects.
        """
        Xi, yi, weight = self._split_batch(batch)
        self._set_training(False)
        with torch.no_grad():
            y_pred = self.infer(Xi, **fit_params)
            X_loss = Xi if weight is None else {"X": Xi, "sample_weight": weight}
            loss = self.get_loss(y_pred, yi, X=X_loss, training=False)
        return {"loss": loss, "y_pred": y_pred}

    def evaluation_step(self, batch, training=False):
        """Run the forward pass for prediction (through the EMA weights if any).

        Parameters
        ----------
        batch : tuple
            A batch of rows.
        training : bool, default=False
            Whether the module is in training mode.

        Returns
        -------
        logits : tensor of shape (n, n_classes)
            The module's output.
        """
        Xi, yi, _ = self._split_batch(batch)
        ema = getattr(self, "ema_state_", None)
        if ema is None or training:
            return super().evaluation_step((Xi, yi), training=training)
        self.check_is_fitted()
        ema.module.eval()
        with torch.no_grad():
            return ema.module(to_tensor(Xi, device=self.device))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags

    def _fit_augmentation(self, aug, default, X_fit):
        """A clone of ``aug`` (``default`` when None), fitted on ``X_fit`` when it has ``fit``."""
        aug = clone_param(default if aug is None else aug)
        if hasattr(aug, "_validate_params"):
            aug._validate_params()
        if hasattr(aug, "fit"):
            aug.fit(torch.as_tensor(X_fit))
        return aug

    # --- fit ---
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the net on ``(X, y)``, ``y == -1`` marking unlabeled rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Training rows (cast to float32).
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the labeled rows' loss.
        **fit_params : dict
            Passed to skorch's fit loop.

        Returns
        -------
        self : object
            The fitted net.
        """
        return self._fit(X, y, sample_weight, reset=True, **fit_params)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None, **fit_params):
        """Train ``max_epochs`` more epochs on ``(X, y)``; on an unfitted net, :meth:`fit`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Training rows.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        classes : ignored
            Present for API compatibility; the classes come from the first fit.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the labeled rows' loss.
        **fit_params : dict
            Passed to skorch's fit loop.

        Returns
        -------
        self : object
            The fitted net.
        """
        reset = not self.__dict__.get("initialized_", False) or not hasattr(self, "input_shape_")
        return self._fit(X, y, sample_weight, reset=reset, **fit_params)

    def _fit(self, X, y, sample_weight, reset, **fit_params):
        check_device(self.device)
        with torch_threads(self.n_jobs):
            return self._fit_with_threads(X, y, sample_weight, reset, **fit_params)

    def _fit_with_threads(self, X, y, sample_weight, reset, **fit_params):
        X, y_enc, mask, weight = self._validate_fit_data(X, y, sample_weight, reset)
        parallel = self._check_parallel()
        if parallel.active:
            parallel.check_same_data(X, y_enc)
        self.input_shape_ = tuple(X.shape[1:])
        seed = parallel.stream_seed(seed_from(self.random_state))
        X_lab = X[mask]
        self._fit_rng = FitRandomness(seed, self.device)
        batch = parallel.local_batch_size(self.batch_size)
        self._labeled_sampler = (self._steps_per_epoch(X_lab.shape[0]) * batch, seed + 1)
        try:
            self._start_fit(X, y_enc, mask, reset, seed)
            if reset and not (self.warm_start and self.initialized_):
                self.initialize()
            with self._module_section():
                self._check_module_accepts(X_lab)
            self._start_parallel(parallel)
            X_in = X_lab if weight is None else {"X": X_lab, "sample_weight": weight[mask]}
            NeuralNetClassifier.partial_fit(self, X_in, y_enc[mask], **fit_params)
        finally:
            self._end_parallel()
            self._labeled_sampler = None
            self.__dict__.pop("_fit_rng", None)
            self._end_fit()
        predicted = y_enc.copy()
        if not mask.all():
            predicted[~mask] = np.argmax(self._proba(X[~mask]), axis=1)
        self._set_transduction(y_enc, predicted)
        return self

    # --- several processes (skssl.deep._parallel) ---
    def _check_parallel(self):
        """The fit's processes, checked against the net's device."""
        parallel = ParallelFit.for_net(self.accelerator)
        if parallel.active and not _same_device(self.device, parallel.accelerator.device):
            raise ValueError(
                f"device={self.device!r} but the accelerator runs this process on "
                f"{parallel.accelerator.device}; pass device=accelerator.device."
            )
        parallel.local_batch_size(self.batch_size)  # raises before training
        return parallel

    def _start_parallel(self, parallel):
        """Wrap the module; process 0's weights go to every process."""
        if not parallel.active:
            return
        self.module_ = parallel.wrap(self.module_)
        ema = getattr(self, "ema_state_", None)
        if ema is not None:
            parallel.broadcast_module(ema.module)
        if parallel.rank != 0:
            self._silenced_sinks = [(cb, cb.sink) for _, cb in self.callbacks_ if isinstance(cb, PrintLog)]
            for cb, _ in self._silenced_sinks:
                cb.sink = _no_print
        self._parallel = parallel

    def _end_parallel(self):
        """Put the plain module back (a fitted net holds no process group)."""
        if isinstance(self.__dict__.get("module_"), torch.nn.parallel.DistributedDataParallel):
            self.module_ = self.module_.module
        for cb, sink in self.__dict__.pop("_silenced_sinks", []):
            cb.sink = sink
        self.__dict__.pop("_parallel", None)

    def _plain_module(self):
        """The module without its data-parallel wrapper."""
        module = self.module_
        return module.module if isinstance(module, torch.nn.parallel.DistributedDataParallel) else module

    @abstractmethod
    def train_step_single(self, batch, **fit_params):
        """Compute the loss of one training step and its gradient.

        Parameters
        ----------
        batch : tuple
            A labeled batch (rows, encoded targets, optional weights).
        **fit_params : dict
            Passed to the module.

        Returns
        -------
        step : dict
            ``loss`` and ``y_pred`` (the labeled rows' logits), as skorch expects.
        """

    def _steps_per_epoch(self, n_labeled):
        return self.iterations_per_epoch

    def _start_fit(self, X, y_enc, mask, reset, seed):
        """Hook: set up the fitted parameter objects before training."""

    def _end_fit(self):
        """Hook: drop the per-fit training state."""

    # --- prediction ---
    def predict_proba(self, X):
        """Class probabilities (columns ordered as ``classes_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Rows to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, rows summing to 1.
        """
        if not isinstance(X, torch.utils.data.Dataset):  # from skorch's scoring callbacks
            X = self._validate_predict_X(X)
        return self._proba(X)

    def _proba(self, X):
        """``predict_proba`` of validated rows (or a skorch Dataset)."""
        with torch_threads(self.n_jobs):
            return np.asarray(super().predict_proba(X), dtype=np.float64)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Rows to label.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels among ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
