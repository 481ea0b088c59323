"""skorch nets: the semi-supervised core and a plain supervised baseline.

:class:`SemiSupervisedNet` trains FixMatch-style steps (DESIGN section 4). One
step takes a labeled batch of ``B`` rows from skorch's own ``iterator_train``
(a ``DataLoader`` fed by a seeded endless sampler, so an epoch is a fixed
``iterations_per_epoch`` steps instead of one pass over a handful of labeled
rows) and an unlabeled batch of ``mu * B`` rows drawn inside
``train_step_single`` from an endless seeded shuffle. The weak view of the
labeled rows and the weak and strong views of the unlabeled rows go through
the module in one forward pass (as FixMatch does, so BatchNorm sees all of
them), and the loss is ::

    CE(labeled) + lambda_u * mean(mask * CE(strong, pseudo)) [+ lambda_f * L_f]

with ``mask, pseudo = policy.mask(softmax(weak logits))`` (see
:mod:`skssl.deep._thresholds`).

How the skorch traps of DESIGN section 4 are handled:

* labels are encoded by :mod:`skssl.base`; skorch only ever sees the labeled
  rows and their class indices, ``classes_`` never holds -1 and ``predict``
  maps indices back to labels;
* ``train_split`` defaults to ``None``; a user-given split only ever sees the
  labeled rows;
* the EMA copy of the module lives in a plain holder object (:class:`_EMA`),
  not in an attribute skorch would register and hand to the optimizer;
* every source of randomness is seeded from ``random_state``: the two
  samplers use their own numpy generators, and the module initialisation and
  the augmentations run under a forked torch RNG seeded for the fit, so the
  caller's global torch RNG is left as it was.

Decisions:

* the EMA (decay ``ema_decay``, 0.999 in the papers) uses the warm-up
  ``decay_t = min(ema_decay, (1 + t) / (10 + t))``: with a fixed 0.999 a CPU
  schedule of a thousand steps would predict with weights still about 37%
  from their random initialisation. BatchNorm buffers are copied, not
  averaged. ``predict``/``predict_proba`` use the EMA weights.
* when fewer unlabeled rows exist than one unlabeled batch, the unlabeled
  batch is all of them (each step sees every unlabeled row once).
* inputs are cast to float32; 2-D ``X`` gets the default MLP, 4-D ``X`` the
  default CNN; any other dimensionality raises. Sparse input is not accepted
  (a net densifies every batch anyway; pass ``X.toarray()`` deliberately).
* the default optimiser is Adam with ``lr=1e-3``: the papers' SGD with
  learning rate 0.03 and a cosine schedule assumes 2^20 steps on a GPU.
* CPU-sized defaults: ``batch_size=32``, ``mu=3`` (FixMatch/FreeMatch; the
  papers use 64 and 7 on GPUs, Adsh's paper uses ``mu=2``, kept), 20 epochs of
  50 steps. One default step on 28x28 images (32 + 2 x 96 images through the
  default CNN) costs about 0.09 s of one core, so 1000 steps take about 1.5
  minutes; with the papers' 64 and 7 a step holds about 4 times more images.
"""

import copy
import math
import numbers
import types

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data
from skorch import NeuralNetClassifier
from skorch.callbacks import EpochScoring
from skorch.dataset import unpack_data
from skorch.utils import to_tensor
from torch.utils.data import DataLoader, Sampler

from ..base import SemiSupervisedClassifierMixin, encode_semi_supervised_target, labeled_mask
from ._augment import default_augmentations
from ._modules import default_module_for
from ._thresholds import ClassAdaptiveThreshold, FixedThreshold, SelfAdaptiveThreshold

__all__ = [
    "SemiSupervisedNet",
    "FixMatchClassifier",
    "FreeMatchClassifier",
    "AdshClassifier",
    "SupervisedNetClassifier",
]


class _EndlessSampler(Sampler):
    """Indices from an endless stream of seeded permutations of ``range(n)``.

    Each ``__iter__`` yields the next ``num_samples`` indices of the stream, so
    consecutive epochs continue where the previous one stopped.
    """

    def __init__(self, n, num_samples, seed):
        self.n = int(n)
        self.num_samples = int(num_samples)
        self._rng = np.random.default_rng(seed)
        self._buffer = np.empty(0, dtype=np.int64)

    def take(self, k):
        while self._buffer.shape[0] < k:
            self._buffer = np.concatenate([self._buffer, self._rng.permutation(self.n)])
        out, self._buffer = self._buffer[:k], self._buffer[k:]
        return out

    def __iter__(self):
        return iter(self.take(self.num_samples).tolist())

    def __len__(self):
        return self.num_samples


class _EMA:
    """Exponential moving average of a module's parameters (buffers copied)."""

    def __init__(self, module, decay):
        self.module = copy.deepcopy(module)
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.decay = float(decay)
        self.n_updates = 0

    @torch.no_grad()
    def update(self, module):
        d = min(self.decay, (1.0 + self.n_updates) / (10.0 + self.n_updates))
        for e, p in zip(self.module.parameters(), module.parameters()):
            e.mul_(d).add_(p.detach(), alpha=1.0 - d)
        for e, b in zip(self.module.buffers(), module.buffers()):
            e.copy_(b)
        self.n_updates += 1


def _encoded_accuracy(net, X, y):
    """Accuracy of ``argmax(predict_proba)`` against encoded targets (skorch validation)."""
    return float(np.mean(np.argmax(net.predict_proba(X), axis=1) == np.asarray(y).reshape(-1)))


def _seed_from(random_state):
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _check_positive(value, name, integer=False):
    kinds = numbers.Integral if integer else numbers.Real
    if not isinstance(value, kinds) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        what = "a positive integer" if integer else "a positive number"
        raise ValueError(f"{name} must be {what}, got {value!r}.")


class _NetCommon:
    """Data handling shared by the supervised and semi-supervised nets."""

    # skorch's NeuralNet.__init__ stores these three fitted-state attributes on
    # the instance, which sklearn's check_no_attributes_set_in_init rejects;
    # _drop_skorch_init_state moves them back to these class-level defaults
    # (initialize() sets the instance values).
    history_ = None
    initialized_ = False
    virtual_params_ = types.MappingProxyType({})

    def _drop_skorch_init_state(self):
        for name in ("history_", "initialized_", "virtual_params_"):
            if name in self.__dict__ and not self.__dict__[name]:
                del self.__dict__[name]

    def _get_param_names(self):
        # skorch returns every instance attribute not ending in "_" (private
        # ones included); keep sklearn's signature-based names, plus routed
        # "prefix__name" params and any extra skorch keyword given to __init__.
        names = set(BaseEstimator._get_param_names.__func__(type(self)))
        extra = getattr(self, "_params_to_validate", set())
        for key in self.__dict__:
            if not key.startswith("_") and not key.endswith("_") and ("__" in key or key in extra):
                names.add(key)
        return sorted(names)

    def set_params(self, **params):
        """Set parameters the skorch way (``module__*``, ``optimizer__*`` ... are routed).

        Before the net is initialized, ``callbacks`` is stored as given and
        checked by ``fit`` (skorch would initialise the callbacks at once).
        """
        if not self.__dict__.get("initialized_", False) and "callbacks" in params:
            self.callbacks = params.pop("callbacks")
        return super().set_params(**params)

    def _check_common_params(self):
        _check_positive(self.batch_size, "batch_size", integer=True)
        _check_positive(self.max_epochs, "max_epochs", integer=True)
        if self.iterations_per_epoch is not None:
            _check_positive(self.iterations_per_epoch, "iterations_per_epoch", integer=True)

    def _validate_X_shape(self, X):
        ndim = X.ndim
        if ndim not in (2, 4):
            raise ValueError(
                f"X must be 2-D (n_samples, n_features) or 4-D images (n_samples, channels, "
                f"height, width); got a {ndim}-D array of shape {np.shape(X)}."
            )

    def _torch_devices(self):
        return None if str(self.device).startswith("cuda") else []

    def initialize_module(self):
        """Initialize the module; the default is sized from the training data."""
        kwargs = self.get_params_for("module")
        if self.module is None:
            shape = getattr(self, "input_shape_", None)
            if shape is None:
                raise ValueError("The default module is sized at fit time; call fit(X, y) first.")
            module_cls, sizing = default_module_for(shape, len(self.classes_))
            self.module_ = module_cls(**{**sizing, **kwargs})
            return self
        return super().initialize_module()

    def _init_augment(self, aug, default, X_fit):
        aug = copy.deepcopy(default if aug is None else aug)
        if not callable(aug):
            raise ValueError(f"augmentations must be callables on torch batches, got {aug!r}.")
        if hasattr(aug, "fit"):
            aug.fit(torch.as_tensor(X_fit))
        return aug

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

    def _validate_predict_X(self, X):
        check_is_fitted(self, "input_shape_")
        if len(self.input_shape_) == 3:
            # images: name the shapes before sklearn's "n features" message on the channels
            shape = tuple(np.asarray(X).shape[1:])
            if shape != tuple(self.input_shape_):
                raise ValueError(
                    f"X has rows of shape {shape}, but {type(self).__name__} was fitted on images "
                    f"of shape {tuple(self.input_shape_)} (channels, height, width)."
                )
        X = validate_data(self, X, reset=False, dtype=np.float32, allow_nd=True)
        self._validate_X_shape(X)
        if tuple(X.shape[1:]) != tuple(self.input_shape_):
            raise ValueError(
                f"X has rows of shape {tuple(X.shape[1:])}, but {type(self).__name__} was fitted on "
                f"rows of shape {tuple(self.input_shape_)}."
            )
        return X

    @property
    def classes_(self):
        try:
            return self.__dict__["_fitted_classes"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no attribute 'classes_' before fit.") from None

    @classes_.setter
    def classes_(self, value):
        self.__dict__["_fitted_classes"] = value

    def predict_proba(self, X):
        """Class probabilities (columns ordered as ``classes_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Input rows.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        if isinstance(X, torch.utils.data.Dataset):
            # skorch's own scoring callbacks pass the validation Dataset
            with torch.random.fork_rng(devices=self._torch_devices()):
                return np.asarray(super().predict_proba(X), dtype=np.float64)
        X = self._validate_predict_X(X)
        # skorch's DataLoader draws a base seed from torch's global generator:
        # fork it so that predicting leaves the caller's random stream alone
        with torch.random.fork_rng(devices=self._torch_devices()):
            return np.asarray(super().predict_proba(X), dtype=np.float64)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Input rows.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    @property
    def _default_callbacks(self):
        # skorch's valid_acc compares predict() with the encoded validation
        # targets; predict() returns user labels, so score the indices instead
        callbacks = []
        for name, cb in super()._default_callbacks:
            if name == "valid_acc":
                cb = EpochScoring(_encoded_accuracy, name="valid_acc", lower_is_better=False)
            callbacks.append((name, cb))
        return callbacks

    def get_iterator(self, dataset, training=False):
        """skorch's iterator; in training it draws from the seeded endless sampler."""
        spec = getattr(self, "_labeled_sampler", None)
        if training and spec is not None:
            kwargs = self.get_params_for("iterator_train")
            if "sampler" not in kwargs and "batch_sampler" not in kwargs:
                kwargs.pop("shuffle", None)
                kwargs.setdefault("batch_size", self.batch_size)
                # sized from the dataset skorch hands over (a train_split may have shrunk it)
                num_samples, seed = spec
                sampler = _EndlessSampler(len(dataset), num_samples, seed)
                return self.iterator_train(dataset, sampler=sampler, **kwargs)
        return super().get_iterator(dataset, training=training)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


class SemiSupervisedNet(_NetCommon, SemiSupervisedClassifierMixin, NeuralNetClassifier):
    """FixMatch-style semi-supervised skorch classifier with a pluggable masking policy.

    ``fit(X, y)`` with ``y == -1`` for unlabeled rows. The three public
    estimators :class:`FixMatchClassifier`, :class:`FreeMatchClassifier` and
    :class:`AdshClassifier` are this net with a fixed policy; use this class
    directly to plug in your own policy object.

    Parameters
    ----------
    module : torch module class or instance, default=None
        Must return logits. ``None``: an MLP for 2-D ``X``, a small CNN for 4-D
        ``X``, sized at fit time (``module__hidden_units`` /
        ``module__channels`` tune them).
    masking : policy object, default=None
        An object with ``start``, ``update``, ``mask`` and ``thresholds`` (see
        :mod:`skssl.deep._thresholds`); ``None`` is ``FixedThreshold(0.95)``.
    mu : float, default=3
        Unlabeled batch size as a multiple of ``batch_size`` (the papers use 7 on a GPU).
    lambda_u : float, default=1.0
        Weight of the unlabeled loss.
    lambda_f : float, default=0.0
        Weight of the policy's fairness loss (used if the policy has one).
    ema_decay : float, default=0.999
        Decay of the EMA weights used for prediction; 0 predicts with the
        trained weights themselves.
    weak_augment, strong_augment : callable, default=None
        Callables on torch batches; ``None`` picks the defaults for the
        dimensionality of ``X`` (see :mod:`skssl.deep._augment`).
    iterations_per_epoch : int, default=50
        Training steps per epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the samplers, the augmentations and the weight initialisation.
    criterion, optimizer, lr, max_epochs, batch_size, iterator_train, \
iterator_valid, dataset, train_split, callbacks, predict_nonlinearity, \
warm_start, verbose, device, **kwargs
        As in :class:`skorch.NeuralNetClassifier` (``module__*``,
        ``optimizer__*`` ... are routed the skorch way). Defaults differ:
        ``criterion=CrossEntropyLoss`` (modules return logits),
        ``optimizer=Adam``, ``lr=1e-3``, ``max_epochs=20``, ``batch_size=32``,
        ``train_split=None``, ``verbose=0``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labeled classes, sorted.
    transduction_ : ndarray of shape (n_samples,)
        Label of each training row (the prediction for unlabeled rows).
    input_shape_ : tuple
        ``X.shape[1:]`` at fit time.
    policy_ : object
        The fitted masking policy.
    history_ : skorch History
        Per batch ``loss_x``, ``loss_u``, ``loss_f``, ``mask_rate``; per epoch
        ``mask_rate`` (mean) and ``thresholds`` (per class).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skssl.deep import SemiSupervisedNet, FixedThreshold
    >>> X, y = make_blobs(200, centers=2, random_state=0)
    >>> y_semi = np.where(np.arange(200) < 10, y, -1)
    >>> net = SemiSupervisedNet(masking=FixedThreshold(0.9), max_epochs=2,
    ...                         iterations_per_epoch=5, random_state=0).fit(X, y_semi)
    >>> net.predict(X[:3]).shape
    (3,)
    """

    def __init__(
        self,
        module=None,
        *,
        masking=None,
        mu=3,
        lambda_u=1.0,
        lambda_f=0.0,
        ema_decay=0.999,
        weak_augment=None,
        strong_augment=None,
        iterations_per_epoch=50,
        random_state=None,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=20,
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
        **kwargs,
    ):
        if dataset is not None:
            kwargs["dataset"] = dataset
        super().__init__(
            module,
            criterion=criterion,
            optimizer=optimizer,
            lr=lr,
            max_epochs=max_epochs,
            batch_size=batch_size,
            iterator_train=iterator_train,
            iterator_valid=iterator_valid,
            train_split=train_split,
            callbacks=callbacks,
            predict_nonlinearity=predict_nonlinearity,
            warm_start=warm_start,
            verbose=verbose,
            device=device,
            **kwargs,
        )
        self.dataset = dataset
        self.masking = masking
        self.mu = mu
        self.lambda_u = lambda_u
        self.lambda_f = lambda_f
        self.ema_decay = ema_decay
        self.weak_augment = weak_augment
        self.strong_augment = strong_augment
        self.iterations_per_epoch = iterations_per_epoch
        self.random_state = random_state
        self._drop_skorch_init_state()

    # --- hooks for the thin subclasses -------------------------------------------------
    def _make_policy(self):
        return copy.deepcopy(FixedThreshold(0.95) if self.masking is None else self.masking)

    def _check_params(self):
        self._check_common_params()
        _check_positive(self.mu, "mu")
        for name in ("lambda_u", "lambda_f"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value >= 0:
                raise ValueError(f"{name} must be a non-negative number, got {value!r}.")
        if not isinstance(self.ema_decay, numbers.Real) or not 0 <= self.ema_decay < 1:
            raise ValueError(f"ema_decay must be a number in [0, 1), got {self.ema_decay!r}.")
        if self.iterations_per_epoch is None:
            raise ValueError("iterations_per_epoch must be a positive integer, got None.")

    # --- skorch plumbing ---------------------------------------------------------------
    def get_dataset(self, X, y=None):
        if self.dataset is None:
            from skorch.dataset import Dataset

            return Dataset(X, y)
        return super().get_dataset(X, y)

    def _initialize_module(self, reason=None):
        out = super()._initialize_module(reason=reason)
        if self.ema_decay > 0:
            self.ema_ = _EMA(self.module_, self.ema_decay)
        else:
            self.ema_ = None
        return out

    def evaluation_step(self, batch, training=False):
        """Forward pass for prediction, through the EMA weights when there are some."""
        ema = getattr(self, "ema_", None)
        if ema is None or training:
            return super().evaluation_step(batch, training=training)
        self.check_is_fitted()
        Xi, _ = unpack_data(batch)
        ema.module.eval()
        with torch.no_grad():
            return ema.module(to_tensor(Xi, device=self.device))

    def fit(self, X, y, **fit_params):
        """Fit the net on ``(X, y)``, ``y == -1`` marking unlabeled rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Training rows (cast to float32).
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        **fit_params : dict
            Passed to skorch's fit loop.

        Returns
        -------
        self : object
        """
        return self._fit(X, y, reset=True, **fit_params)

    def partial_fit(self, X, y, classes=None, **fit_params):
        """Train ``max_epochs`` more epochs on ``(X, y)`` without re-initialising.

        The first call (or a call on an unfitted net) is :meth:`fit`. Later
        calls need the same input shape and labels among ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Training rows.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        classes : ignored
            Present for API compatibility; the classes come from the first fit.
        **fit_params : dict
            Passed to skorch's fit loop.

        Returns
        -------
        self : object
        """
        if not self.__dict__.get("initialized_", False) or not hasattr(self, "input_shape_"):
            return self._fit(X, y, reset=True, **fit_params)
        return self._fit(X, y, reset=False, **fit_params)

    def _encode_again(self, y):
        classes, y_enc, mask = encode_semi_supervised_target(y)
        pos = np.searchsorted(self.classes_, classes)
        pos = np.minimum(pos, len(self.classes_) - 1)
        if np.any(self.classes_[pos] != classes):
            raise ValueError(
                f"y holds labels {sorted(set(classes) - set(self.classes_))} not seen in the first fit "
                f"(classes_ = {self.classes_})."
            )
        return np.where(mask, pos[np.maximum(y_enc, 0)], -1), mask

    def _fit(self, X, y, reset, **fit_params):
        self._check_params()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        if reset:
            X, y_enc, mask = self._validate_semi_supervised_data(
                X, y, accept_sparse=False, dtype=np.float32, allow_nd=True
            )
        else:
            X = self._validate_predict_X(X)
            y = column_or_1d(np.asarray(y), warn=True)
            check_consistent_length(X, y)
            y_enc, mask = self._encode_again(y)
        self._validate_X_shape(X)
        X = np.ascontiguousarray(X, dtype=np.float32)
        self.input_shape_ = tuple(X.shape[1:])
        n_classes = len(self.classes_)
        seed = _seed_from(self.random_state)
        X_lab, y_lab = X[mask], y_enc[mask]
        X_unl = X[~mask]
        with torch.random.fork_rng(devices=self._torch_devices()):
            torch.manual_seed(seed)
            if reset or not hasattr(self, "policy_"):
                weak, strong = default_augmentations(X.ndim, X.shape[1] if X.ndim == 2 else None)
                self.weak_augment_ = self._init_augment(self.weak_augment, weak, X)
                self.strong_augment_ = self._init_augment(self.strong_augment, strong, X)
                self.policy_ = self._make_policy().start(n_classes, np.bincount(y_lab, minlength=n_classes))
            self._labeled_sampler = (self.iterations_per_epoch * self.batch_size, seed + 1)
            self._unlabeled_stream = _EndlessSampler(X_unl.shape[0], 0, seed + 2)
            self._X_unl_t = to_tensor(X_unl, device=self.device)
            try:
                if reset and not (self.warm_start and self.initialized_):
                    self.initialize()
                self._check_module_accepts(X_lab)
                NeuralNetClassifier.partial_fit(self, X_lab, y_lab, **fit_params)
            finally:
                self._labeled_sampler = None
                self._unlabeled_stream = None
                del self._X_unl_t
        proba = self.predict_proba(X)
        self._set_transduction(y_enc, proba.argmax(axis=1))
        return self

    def _unlabeled_batch(self, n_labeled):
        n_u = self._X_unl_t.shape[0]
        k = min(max(1, int(round(self.mu * n_labeled))), n_u)
        idx = torch.as_tensor(self._unlabeled_stream.take(k), device=self._X_unl_t.device)
        return self._X_unl_t[idx]

    def train_step_single(self, batch, **fit_params):
        """One FixMatch-style step: supervised + masked pseudo-label loss (+ fairness)."""
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        Xi = to_tensor(Xi, device=self.device)
        yi = to_tensor(yi, device=self.device)
        x_l = self.weak_augment_(Xi)
        n_l = x_l.shape[0]
        history = self.history
        if self._X_unl_t.shape[0] == 0:
            logits_l = self.infer(x_l, **fit_params)
            loss = loss_x = self.get_loss(logits_l, yi, X=Xi, training=True)
            history.record_batch("loss_x", loss_x.item())
        else:
            Xu = self._unlabeled_batch(n_l)
            n_u = Xu.shape[0]
            views = torch.cat([x_l, self.weak_augment_(Xu), self.strong_augment_(Xu)])
            logits = self.infer(views, **fit_params)
            logits_l, logits_w, logits_s = logits[:n_l], logits[n_l : n_l + n_u], logits[n_l + n_u :]
            loss_x = self.get_loss(logits_l, yi, X=Xi, training=True)
            probs_w = torch.softmax(logits_w.detach().float(), dim=1)
            policy = self.policy_
            if policy.update_every == "batch":
                policy.update(probs_w)
            mask, pseudo = policy.mask(probs_w)
            ce_u = F.cross_entropy(logits_s, pseudo, reduction="none")
            loss_u = (ce_u * mask.to(ce_u.dtype)).mean()
            loss = loss_x + self.lambda_u * loss_u
            history.record_batch("loss_x", loss_x.item())
            history.record_batch("loss_u", loss_u.item())
            history.record_batch("mask_rate", float(mask.float().mean()))
            if self.lambda_f > 0 and hasattr(policy, "fairness_loss"):
                loss_f = policy.fairness_loss(torch.softmax(logits_s.float(), dim=1), mask)
                loss = loss + self.lambda_f * loss_f
                history.record_batch("loss_f", loss_f.item())
        loss.backward()
        return {"loss": loss, "y_pred": logits_l}

    def train_step(self, batch, **fit_params):
        step = super().train_step(batch, **fit_params)
        if getattr(self, "ema_", None) is not None:
            self.ema_.update(self.module_)
        return step

    @torch.no_grad()
    def _unlabeled_probs_weak(self):
        module = self.module_
        was_training = module.training
        module.eval()
        chunks = []
        bs = max(self.batch_size * 8, 256)
        for start in range(0, self._X_unl_t.shape[0], bs):
            xb = self.weak_augment_(self._X_unl_t[start : start + bs])
            chunks.append(torch.softmax(module(xb).float(), dim=1))
        module.train(was_training)
        return torch.cat(chunks)

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        """Epoch-level policy update (Adsh) and the per-epoch history entries."""
        super().on_epoch_end(net, dataset_train=dataset_train, dataset_valid=dataset_valid, **kwargs)
        unl = getattr(self, "_X_unl_t", None)
        if unl is None:
            return
        if self.policy_.update_every == "epoch" and unl.shape[0] > 0:
            self.policy_.update(self._unlabeled_probs_weak())
        rates = [b["mask_rate"] for b in self.history[-1]["batches"] if "mask_rate" in b]
        if rates:
            self.history.record("mask_rate", float(np.mean(rates)))
        self.history.record("thresholds", self.policy_.thresholds())


class FixMatchClassifier(SemiSupervisedNet):
    """FixMatch: pseudo-labels from a fixed confidence threshold (Sohn et al., 2020).

    Parameters
    ----------
    threshold : float, default=0.95
        Confidence a weak-view prediction needs to become a pseudo-label, in (0, 1].
    mu : float, default=3
        Unlabeled batch size as a multiple of ``batch_size`` (the papers use 7 on a GPU).
    lambda_u : float, default=1.0
        Weight of the unlabeled loss.
    ema_decay : float, default=0.999
        EMA decay of the prediction weights.
    **other
        See :class:`SemiSupervisedNet` (``module``, ``max_epochs``, ``lr``,
        ``optimizer``, ``batch_size``, ``callbacks``, ``device``,
        ``module__*``, ``random_state`` ...).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from skssl.deep import FixMatchClassifier
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_semi = np.full(200, -1); y_semi[:10] = y[:10]
    >>> clf = FixMatchClassifier(max_epochs=2, iterations_per_epoch=5, random_state=0)
    >>> clf.fit(X, y_semi).predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        module=None,
        *,
        threshold=0.95,
        mu=3,
        lambda_u=1.0,
        ema_decay=0.999,
        weak_augment=None,
        strong_augment=None,
        iterations_per_epoch=50,
        random_state=None,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=20,
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
        **kwargs,
    ):
        super().__init__(
            module,
            mu=mu,
            lambda_u=lambda_u,
            ema_decay=ema_decay,
            weak_augment=weak_augment,
            strong_augment=strong_augment,
            iterations_per_epoch=iterations_per_epoch,
            random_state=random_state,
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
        object.__delattr__(self, "masking")
        object.__delattr__(self, "lambda_f")
        self.threshold = threshold

    lambda_f = 0.0
    masking = None

    def _make_policy(self):
        return FixedThreshold(self.threshold)


class FreeMatchClassifier(SemiSupervisedNet):
    """FreeMatch: self-adaptive thresholds and fairness (Wang et al., ICLR 2023; paper 001).

    Parameters
    ----------
    sat_momentum : float, default=0.999
        EMA momentum of the self-adaptive threshold state, in [0, 1).
    lambda_f : float, default=0.01
        Weight of the self-adaptive fairness (SAF) loss (paper's few-label value).
    saf_sign : {-1, 1}, default=-1
        Sign of the SAF loss: ``-1`` is the paper's printed formula
        ``L_f = -H(., .)`` and USB's code; ``1`` minimises the cross-entropy
        between the normalised marginal and the batch mean (what the paper's
        sentence describes). ``-1`` is the default because it won on MNIST
        with 2000 steps: 0.538 vs 0.502 test accuracy with 1 label per class,
        0.948 vs 0.902 with 4 (at 400 steps the two were within 0.005;
        ``benchmarks/results/deep_ssl.md``).
    mu : float, default=3
        Unlabeled batch size as a multiple of ``batch_size`` (the papers use 7 on a GPU).
    lambda_u : float, default=1.0
        Weight of the unlabeled loss.
    ema_decay : float, default=0.999
        EMA decay of the prediction weights.
    **other
        See :class:`SemiSupervisedNet`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from skssl.deep import FreeMatchClassifier
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_semi = np.full(200, -1); y_semi[:10] = y[:10]
    >>> clf = FreeMatchClassifier(max_epochs=2, iterations_per_epoch=5, random_state=0)
    >>> clf.fit(X, y_semi).history[-1, "thresholds"][0] > 0
    True
    """

    def __init__(
        self,
        module=None,
        *,
        sat_momentum=0.999,
        lambda_f=0.01,
        saf_sign=-1,
        mu=3,
        lambda_u=1.0,
        ema_decay=0.999,
        weak_augment=None,
        strong_augment=None,
        iterations_per_epoch=50,
        random_state=None,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=20,
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
        **kwargs,
    ):
        super().__init__(
            module,
            mu=mu,
            lambda_u=lambda_u,
            lambda_f=lambda_f,
            ema_decay=ema_decay,
            weak_augment=weak_augment,
            strong_augment=strong_augment,
            iterations_per_epoch=iterations_per_epoch,
            random_state=random_state,
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
        object.__delattr__(self, "masking")
        self.sat_momentum = sat_momentum
        self.saf_sign = saf_sign

    masking = None

    def _make_policy(self):
        return SelfAdaptiveThreshold(momentum=self.sat_momentum, saf_sign=self.saf_sign)


class AdshClassifier(SemiSupervisedNet):
    """Adsh: class-adaptive thresholds for class-imbalanced data (Guo & Li, ICML 2022; paper 000).

    Parameters
    ----------
    tau_1 : float, default=0.95
        Threshold of the majority class (the class with the most labeled
        rows) and cap of every class threshold, in (0, 1].
    mu : float, default=2
        Unlabeled batch size as a multiple of ``batch_size`` (the paper's value).
    lambda_u : float, default=1.0
        Weight of the unlabeled loss.
    ema_decay : float, default=0.999
        EMA decay of the prediction weights.
    **other
        See :class:`SemiSupervisedNet`. Thresholds are recomputed after every
        epoch over the whole unlabeled set (see
        :class:`~skssl.deep.ClassAdaptiveThreshold`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skssl.deep import AdshClassifier
    >>> X, y = make_blobs(300, centers=3, random_state=0)
    >>> y_semi = np.full(300, -1); y_semi[:30] = y[:30]
    >>> clf = AdshClassifier(max_epochs=2, iterations_per_epoch=5, random_state=0).fit(X, y_semi)
    >>> len(clf.history[-1, "thresholds"])
    3
    """

    def __init__(
        self,
        module=None,
        *,
        tau_1=0.95,
        mu=2,
        lambda_u=1.0,
        ema_decay=0.999,
        weak_augment=None,
        strong_augment=None,
        iterations_per_epoch=50,
        random_state=None,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=20,
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
        **kwargs,
    ):
        super().__init__(
            module,
            mu=mu,
            lambda_u=lambda_u,
            ema_decay=ema_decay,
            weak_augment=weak_augment,
            strong_augment=strong_augment,
            iterations_per_epoch=iterations_per_epoch,
            random_state=random_state,
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
        object.__delattr__(self, "masking")
        object.__delattr__(self, "lambda_f")
        self.tau_1 = tau_1

    lambda_f = 0.0
    masking = None

    def _make_policy(self):
        return ClassAdaptiveThreshold(tau_1=self.tau_1)


class SupervisedNetClassifier(_NetCommon, SemiSupervisedClassifierMixin, NeuralNetClassifier):
    """Plain supervised skorch classifier with skssl's default modules.

    The "labeled rows only" baseline of the deep estimators and the default
    estimator of :class:`~skssl.self_training.CurriculumLabelingClassifier`.
    It follows skssl's contract like :class:`~skssl.svm.LinearL2SVC`: rows
    with ``y == -1`` are unlabeled and ignored by the fit (never a class),
    ``transduction_`` holds the predictions for them, and ``score`` ignores
    them.

    Parameters
    ----------
    module : torch module class or instance, default=None
        Must return logits; ``None``: an MLP for 2-D ``X``, a small CNN for
        4-D ``X``, sized at fit time.
    augment : callable, "weak" or None, default=None
        Augmentation of the training batches: ``None`` for none, ``"weak"``
        for the weak augmentation of the semi-supervised nets.
    iterations_per_epoch : int or None, default=None
        Steps per epoch; ``None``: one pass over the rows, but at least 10
        steps (so a few dozen rows still get a few hundred steps).
    random_state : int, RandomState instance or None, default=None
        Seeds the sampler, the augmentation and the weight initialisation.
    criterion, optimizer, lr, max_epochs, batch_size, iterator_train, \
iterator_valid, dataset, train_split, callbacks, predict_nonlinearity, \
warm_start, verbose, device, **kwargs
        As in :class:`skorch.NeuralNetClassifier`; ``train_split=None`` and
        ``verbose=0`` by default.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (predictions for the unlabeled ones).
    input_shape_ : tuple
    history_ : skorch History

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from skssl.deep import SupervisedNetClassifier
    >>> X, y = make_blobs(100, centers=2, random_state=0)
    >>> clf = SupervisedNetClassifier(max_epochs=5, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    # Supervised: -1 rows are ignored, so a fully labeled y is the normal case.
    _uses_unlabeled_rows = False

    def __init__(
        self,
        module=None,
        *,
        augment=None,
        iterations_per_epoch=None,
        random_state=None,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=30,
        batch_size=64,
        iterator_train=DataLoader,
        iterator_valid=DataLoader,
        dataset=None,
        train_split=None,
        callbacks=None,
        predict_nonlinearity="auto",
        warm_start=False,
        verbose=0,
        device="cpu",
        **kwargs,
    ):
        if dataset is not None:
            kwargs["dataset"] = dataset
        super().__init__(
            module,
            criterion=criterion,
            optimizer=optimizer,
            lr=lr,
            max_epochs=max_epochs,
            batch_size=batch_size,
            iterator_train=iterator_train,
            iterator_valid=iterator_valid,
            train_split=train_split,
            callbacks=callbacks,
            predict_nonlinearity=predict_nonlinearity,
            warm_start=warm_start,
            verbose=verbose,
            device=device,
            **kwargs,
        )
        self.dataset = dataset
        self.augment = augment
        self.iterations_per_epoch = iterations_per_epoch
        self.random_state = random_state
        self._drop_skorch_init_state()

    def get_dataset(self, X, y=None):
        if self.dataset is None:
            from skorch.dataset import Dataset

            return Dataset(X, y)
        return super().get_dataset(X, y)

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Training rows (cast to float32).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights of the cross-entropy (the loss of a batch is the
            mean of weight x cross-entropy).
        **fit_params : dict
            Passed to skorch's fit loop.

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight, reset=True, **fit_params)

    def partial_fit(self, X, y, classes=None, sample_weight=None, **fit_params):
        """Train ``max_epochs`` more epochs on ``(X, y)`` without re-initialising.

        The first call (or a call on an unfitted net) is :meth:`fit`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, c, h, w)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels, among ``classes_`` after the first call.
        classes : ignored
            Present for API compatibility; the classes come from the first fit.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights.
        **fit_params : dict
            Passed to skorch's fit loop.

        Returns
        -------
        self : object
        """
        reset = not self.__dict__.get("initialized_", False) or not hasattr(self, "input_shape_")
        return self._fit(X, y, sample_weight, reset=reset, **fit_params)

    def _fit(self, X, y, sample_weight, reset, **fit_params):
        self._check_common_params()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        if reset:
            X = validate_data(self, X, reset=True, dtype=np.float32, allow_nd=True)
        else:
            X = self._validate_predict_X(X)
        self._validate_X_shape(X)
        X = np.ascontiguousarray(X, dtype=np.float32)
        y = column_or_1d(np.asarray(y), warn=True)
        check_consistent_length(X, y)
        if reset:
            # The skssl contract: -1 rows are unlabeled and ignored by this
            # supervised net (as by LinearL2SVC), never a class.
            self.classes_, y_all, labeled = encode_semi_supervised_target(y, warn_no_unlabeled=False)
        else:
            labeled = labeled_mask(y)
            index = {label: i for i, label in enumerate(self.classes_.tolist())}
            try:
                codes = [index[label] for label in y[labeled].tolist()]
            except KeyError as exc:
                raise ValueError(
                    f"y holds the label {exc.args[0]!r}, not seen in the first fit (classes_ = {self.classes_})."
                ) from None
            y_all = np.full(y.shape[0], -1, dtype=np.int64)
            y_all[labeled] = codes
        if sample_weight is None:
            w = np.ones(X.shape[0], dtype=np.float32)
        else:
            w = np.asarray(sample_weight, dtype=np.float32).reshape(-1)
            check_consistent_length(X, w)
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("sample_weight must be finite and non-negative.")
            if not w.sum() > 0:
                raise ValueError("sample_weight is zero for every row; there is nothing to fit.")
        X_all = X
        X, w, y_enc = X[labeled], w[labeled], y_all[labeled]
        self.input_shape_ = tuple(X.shape[1:])
        seed = _seed_from(self.random_state)
        n = X.shape[0]
        steps = self.iterations_per_epoch
        if steps is None:
            steps = max(math.ceil(n / self.batch_size), 10)
        with torch.random.fork_rng(devices=self._torch_devices()):
            torch.manual_seed(seed)
            if reset or not hasattr(self, "augment_"):
                if self.augment is None:
                    self.augment_ = None
                else:
                    weak, _ = default_augmentations(X.ndim, X.shape[1] if X.ndim == 2 else None)
                    aug = weak if isinstance(self.augment, str) and self.augment == "weak" else self.augment
                    if isinstance(aug, str):
                        raise ValueError(f"augment must be None, 'weak' or a callable, got {aug!r}.")
                    self.augment_ = self._init_augment(aug, weak, X)
            self._labeled_sampler = (steps * self.batch_size, seed + 1)
            try:
                if reset and not (self.warm_start and self.initialized_):
                    self.initialize()
                self._check_module_accepts(X)
                NeuralNetClassifier.partial_fit(
                    self, {"X": X, "sample_weight": w}, y_enc.astype(np.int64), **fit_params
                )
            finally:
                self._labeled_sampler = None
        predicted = y_all.copy()
        if not labeled.all():
            predicted[~labeled] = np.argmax(self.predict_proba(X_all[~labeled]), axis=1)
        self._set_transduction(y_all, predicted)
        return self

    def train_step_single(self, batch, **fit_params):
        """One step of weighted cross-entropy on (optionally augmented) rows."""
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        if isinstance(Xi, dict):
            w = to_tensor(Xi["sample_weight"], device=self.device)
            Xi = Xi["X"]
        else:
            w = None
        Xi = to_tensor(Xi, device=self.device)
        yi = to_tensor(yi, device=self.device)
        if self.augment_ is not None:
            Xi = self.augment_(Xi)
        logits = self.infer(Xi, **fit_params)
        ce = F.cross_entropy(logits, yi, reduction="none")
        loss = (ce * w).mean() if w is not None else ce.mean()
        loss.backward()
        return {"loss": loss, "y_pred": logits}

    def validation_step(self, batch, **fit_params):
        Xi, yi = unpack_data(batch)
        if isinstance(Xi, dict):
            batch = (Xi["X"], yi)
        return super().validation_step(batch, **fit_params)

    def evaluation_step(self, batch, training=False):
        Xi, yi = unpack_data(batch)
        if isinstance(Xi, dict):
            batch = (Xi["X"], yi)
        return super().evaluation_step(batch, training=training)
