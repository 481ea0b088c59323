"""The semi-supervised core net: FixMatch-style steps with a pluggable masking policy.

A step passes ``B`` labeled rows and the weak and strong views of ``mu * B``
unlabeled rows through the module at once, as in FixMatch (Sohn et al.,
2020), and minimises the labeled loss plus :meth:`SemiSupervisedNet.unlabeled_loss`.
Predictions use the EMA of the weights.
Design decisions: user guide, Implementation decisions (deep), "Defaults sized for a CPU".
"""

from numbers import Real

import numpy as np
import torch
from sklearn.utils._param_validation import HasMethods, Interval
from skorch.utils import to_tensor

from ._augment import default_augmentations
from ._base import BaseNet, clone_param
from ._docs import inherit_method_docs
from ._ema import EMAState
from ._losses import masked_cross_entropy
from ._samplers import EndlessSampler
from ._thresholds import FixedThreshold

__all__ = ["SemiSupervisedNet"]


class SemiSupervisedNet(BaseNet):
    """FixMatch-style semi-supervised skorch classifier with a pluggable masking policy.

    Each step adds to the labeled loss the cross-entropy of the unlabeled
    rows' strong view against the weak view's pseudo-labels that the masking
    policy keeps (:meth:`unlabeled_loss`, the method to override).

    %(ssl_sections)s

    See Also
    --------
    FixMatchClassifier : This net with FixMatch's fixed threshold.
    FreeMatchClassifier : This net with FreeMatch's self-adaptive thresholds.
    AdshClassifier : This net with Adsh's class-adaptive thresholds.
    SupervisedNetClassifier : The baseline that ignores the unlabeled rows.

    References
    ----------
    %(reference_fixmatch)s

    Examples
    --------
    A policy of your choice, here FreeMatch's thresholds without its fairness loss:

    >>> import numpy as np
    >>> from skssl.deep import SemiSupervisedNet, SelfAdaptiveThreshold
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (100, 2)), rng.normal(2, 1, (100, 2))]
    >>> y = np.full(200, -1); y[[0, 1, 100, 101]] = [0, 0, 1, 1]
    >>> net = SemiSupervisedNet(masking=SelfAdaptiveThreshold(momentum=0.99), max_epochs=2,
    ...                         iterations_per_epoch=5, random_state=0).fit(X, y)
    >>> net.masking_.thresholds_.shape
    (2,)
    """

    _default_masking = FixedThreshold
    _parameter_objects = ("masking", "weak_augment", "strong_augment")

    _parameter_constraints: dict = {
        **BaseNet._parameter_constraints,
        "masking": [HasMethods(["start", "update", "mask"]), None],
        "mu": [Interval(Real, 0, None, closed="neither")],
        "unlabeled_weight": [Interval(Real, 0, None, closed="left")],
        "ema_momentum": [Interval(Real, 0, 1, closed="left")],
        "weak_augment": [callable, None],
        "strong_augment": [callable, None],
    }

    def __init__(
        self,
        module=None,
        *,
        masking=None,
        mu=3,
        unlabeled_weight=1.0,
        ema_momentum=0.999,
        weak_augment=None,
        strong_augment=None,
        **kwargs,
    ):
        super().__init__(module, **kwargs)
        self.masking = masking
        self.mu = mu
        self.unlabeled_weight = unlabeled_weight
        self.ema_momentum = ema_momentum
        self.weak_augment = weak_augment
        self.strong_augment = strong_augment

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        inherit_method_docs(cls, ("unlabeled_loss",))

    def _default_parameter_object(self, name):
        if name == "masking":
            return self._default_masking()
        return super()._default_parameter_object(name)

    # --- fit state ---
    def _start_fit(self, X, y_enc, mask, reset, seed):
        if reset or not hasattr(self, "masking_"):
            weak, strong = default_augmentations(X.ndim, X.shape[1] if X.ndim == 2 else None)
            self.weak_augment_ = self._fit_augmentation(self.weak_augment, weak, X)
            self.strong_augment_ = self._fit_augmentation(self.strong_augment, strong, X)
            n_classes = len(self.classes_)
            policy = self.masking if self.masking is not None else self._default_masking()
            self.masking_ = clone_param(policy).start(n_classes, np.bincount(y_enc[mask], minlength=n_classes))
        X_unl = X[~mask]
        self._unlabeled_stream = EndlessSampler(X_unl.shape[0], 0, seed + 2)
        self._X_unl_t = to_tensor(X_unl, device=self.device)

    def _end_fit(self):
        self._unlabeled_stream = None
        self._X_unl_t = None

    def _initialize_module(self, reason=None):
        out = super()._initialize_module(reason=reason)
        if "ema_state_" not in self.cuda_dependent_attributes_:
            self.cuda_dependent_attributes_ = [*self.cuda_dependent_attributes_, "ema_state_"]
        self.ema_state_ = EMAState(self.module_) if self.ema_momentum > 0 else None
        return out

    # --- training ---
    def _unlabeled_batch(self, n_labeled):
        n_u = self._X_unl_t.shape[0]
        k = min(max(1, int(round(self.mu * n_labeled))), n_u)
        idx = torch.as_tensor(self._unlabeled_stream.take(k), device=self._X_unl_t.device)
        return self._X_unl_t[idx]

    def unlabeled_loss(self, logits_strong, probs_weak, mask, pseudo_labels):
        """Return the unlabeled part of one step's loss, weights included.

        FixMatch's ``unlabeled_weight * mean(mask * CE(logits_strong,
        pseudo_labels))``, recording ``loss_u``; a new loss overrides this
        method alone.

        Parameters
        ----------
        logits_strong : tensor of shape (n_unlabeled, n_classes)
            Strong-view logits, with their gradient.
        probs_weak : tensor of shape (n_unlabeled, n_classes)
            Detached weak-view probabilities.
        mask : bool tensor of shape (n_unlabeled,)
            The rows the masking policy (``masking_``) keeps.
        pseudo_labels : int tensor of shape (n_unlabeled,)
            The policy's pseudo-label (encoded class index) of every row.

        Returns
        -------
        loss : scalar tensor
            The term added to the labeled loss, with a gradient path to
            ``logits_strong``.
        """
        loss_u = masked_cross_entropy(logits_strong, pseudo_labels, mask)
        self.history.record_batch("loss_u", loss_u.item())
        return self.unlabeled_weight * loss_u

    def train_step_single(self, batch, **fit_params):
        self._set_training(True)
        Xi, yi, weight = self._split_batch(batch)
        Xi = to_tensor(Xi, device=self.device)
        yi = to_tensor(yi, device=self.device)
        X_loss = Xi if weight is None else {"X": Xi, "sample_weight": weight}
        x_l = self._augment(self.weak_augment_, Xi)
        n_l = x_l.shape[0]
        record = self.history.record_batch
        if self._X_unl_t.shape[0] == 0:
            logits_l = self.infer(x_l, **fit_params)
            loss = loss_x = self.get_loss(logits_l, yi, X=X_loss, training=True)
            record("loss_x", loss_x.item())
        else:
            Xu = self._unlabeled_batch(n_l)
            n_u = Xu.shape[0]
            x_w, x_s = self._augment(self.weak_augment_, Xu), self._augment(self.strong_augment_, Xu)
            logits = self.infer(torch.cat([x_l, x_w, x_s]), **fit_params)
            logits_l, logits_w, logits_s = logits[:n_l], logits[n_l : n_l + n_u], logits[n_l + n_u :]
            loss_x = self.get_loss(logits_l, yi, X=X_loss, training=True)
            record("loss_x", loss_x.item())
            probs_w = torch.softmax(logits_w.detach().float(), dim=1)
            policy = self.masking_
            if policy.update_every == "batch":
                policy.update(self._parallel.gather_rows(probs_w))
            mask, pseudo = policy.mask(probs_w)
            record("mask_rate", float(mask.float().mean()))
            loss = loss_x + self.unlabeled_loss(logits_s, probs_w, mask, pseudo)
        loss.backward()
        return {"loss": loss, "y_pred": logits_l}

    def train_step(self, batch, **fit_params):
        """Run skorch's optimizer step, then one EMA step of the prediction weights.

        Parameters
        ----------
        batch : tuple
            A labeled batch from skorch's iterator.
        **fit_params : dict
            Passed to :meth:`train_step_single`.

        Returns
        -------
        step : dict
            What :meth:`train_step_single` returned.
        """
        step = super().train_step(batch, **fit_params)
        if self.ema_state_ is not None:
            self._parallel.sync_buffers(self.module_)
            self.ema_state_.update(self.module_, self.ema_momentum)
        return step

    @torch.no_grad()
    def _unlabeled_probs_weak(self):
        module = self._plain_module()  # no collective: processes may run different chunk counts
        was_training = module.training
        module.eval()
        bs = max(self.batch_size * 8, 256)
        n_rows = self._X_unl_t.shape[0]
        X_share = self._X_unl_t[self._parallel.unlabeled_share(n_rows)]
        with self._module_section():
            chunks = [
                torch.softmax(module(self._augment(self.weak_augment_, X_share[start : start + bs])).float(), 1)
                for start in range(0, X_share.shape[0], bs)
            ]
        module.train(was_training)
        n_classes = len(self.classes_)
        probs = torch.cat(chunks) if chunks else torch.empty((0, n_classes), device=self._X_unl_t.device)
        return self._parallel.gather_share(probs, n_rows)

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        """Update an epoch-level policy (Adsh) and record the per-epoch history entries.

        Parameters
        ----------
        net : SemiSupervisedNet
            This net (skorch's callback protocol).
        dataset_train, dataset_valid : Dataset or None, default=None
            The skorch datasets of the epoch.
        **kwargs : dict
            Other arguments of skorch's callback protocol.
        """
        super().on_epoch_end(net, dataset_train=dataset_train, dataset_valid=dataset_valid, **kwargs)
        unl = getattr(self, "_X_unl_t", None)
        if unl is None:
            return
        policy = self.masking_
        if policy.update_every == "epoch" and unl.shape[0] > 0:
            policy.update(self._unlabeled_probs_weak())
        rates = [b["mask_rate"] for b in self.history[-1]["batches"] if "mask_rate" in b]
        if rates:
            self.history.record("mask_rate", float(np.mean(rates)))
        thresholds = getattr(policy, "thresholds_", None)
        if thresholds is not None:
            thresholds = [float(v) for v in thresholds]
            self.history.record("thresholds", thresholds)
            self.history.record("thr_min", min(thresholds))
            self.history.record("thr_mean", float(np.mean(thresholds)))
            self.history.record("thr_max", max(thresholds))
