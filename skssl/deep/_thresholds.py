"""Masking policies: which unlabeled rows get a pseudo-label, and which one.

The net fits a clone of its policy and calls ``start`` once, ``update`` per
batch or epoch (``update_every``) and ``mask`` per batch.
:class:`FixedThreshold` follows FixMatch (Sohn et al., 2020),
:class:`SelfAdaptiveThreshold` FreeMatch (Wang et al., 2023) and
:class:`ClassAdaptiveThreshold` Adsh (Guo and Li, 2022, Algorithm 2).
Design decisions: user guide, Implementation decisions (deep), "Masking policies".
"""

from abc import ABCMeta, abstractmethod
import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, Options, RealNotInt

from ._docs import inherit_method_docs
from ._losses import self_adaptive_fairness

__all__ = ["FixedThreshold", "SelfAdaptiveThreshold", "ClassAdaptiveThreshold"]

_THRESHOLD = [Interval(RealNotInt, 0, 1, closed="right")]


def _as_numpy(probs):
    return probs.detach().to("cpu", torch.float64).numpy()


class _MaskingPolicy(BaseEstimator, metaclass=ABCMeta):
    """The shared part of the masking policies."""

    update_every = "batch"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        inherit_method_docs(cls, ("update", "mask"))

    def start(self, n_classes, labeled_counts=None):
        """Validate the parameters and reset the state for ``n_classes`` classes.

        Parameters
        ----------
        n_classes : int
            Number of classes.
        labeled_counts : array-like of shape (n_classes,), default=None
            Number of labeled rows per class.

        Returns
        -------
        self : object
            This policy.
        """
        self._validate_params()
        self.n_classes_ = int(n_classes)
        self._reset(labeled_counts)
        return self

    def _thresholds_for(self, probs):
        return torch.as_tensor(self.thresholds_, device=probs.device, dtype=probs.dtype)

    @abstractmethod
    def update(self, probs_weak):
        """Update the state from weak-view probabilities (see ``update_every``).

        Parameters
        ----------
        probs_weak : tensor of shape (n, n_classes)
            Weak-view probabilities of a batch (or, per epoch, of all unlabeled rows).

        Returns
        -------
        self : object
            This policy.
        """

    @abstractmethod
    def mask(self, probs_weak):
        """Return which rows of a batch get a pseudo-label, and which one.

        Parameters
        ----------
        probs_weak : tensor of shape (n, n_classes)
            Weak-view probabilities of an unlabeled batch.

        Returns
        -------
        mask : bool tensor of shape (n,)
            Rows that get a pseudo-label.
        pseudo_labels : int tensor of shape (n,)
            The pseudo-label of every row (used where ``mask`` holds).
        """


class FixedThreshold(_MaskingPolicy):
    """FixMatch's fixed confidence threshold.

    A row with weak-view probabilities ``q`` gets the pseudo-label ``argmax q``
    when ``max q >= threshold``.

    Parameters
    ----------
    threshold : float, default=0.95
        Confidence a row needs for a pseudo-label, in (0, 1].

    Attributes
    ----------
    n_classes_ : int
        Number of classes of the fit.
    thresholds_ : ndarray of shape (n_classes,)
        ``threshold`` for every class.

    See Also
    --------
    SelfAdaptiveThreshold : FreeMatch's thresholds, learned from the confidences.
    ClassAdaptiveThreshold : Adsh's per-class thresholds for imbalanced classes.
    FixMatchClassifier : The net that uses this policy by default.

    References
    ----------
    K. Sohn, D. Berthelot, C.-L. Li, Z. Zhang, N. Carlini, E. D. Cubuk,
    A. Kurakin, H. Zhang and C. Raffel. "FixMatch: Simplifying Semi-Supervised
    Learning with Consistency and Confidence". NeurIPS 2020.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import FixedThreshold
    >>> policy = FixedThreshold(0.9).start(2)
    >>> policy.mask(torch.tensor([[0.95, 0.05], [0.6, 0.4]]))
    (tensor([ True, False]), tensor([0, 0]))
    """

    _parameter_constraints: dict = {"threshold": _THRESHOLD}

    def __init__(self, threshold=0.95):
        self.threshold = threshold

    def _reset(self, labeled_counts):
        self.thresholds_ = np.full(self.n_classes_, float(self.threshold))

    def update(self, probs_weak):
        return self

    def mask(self, probs_weak):
        conf, pseudo = probs_weak.max(dim=1)
        return conf >= self.threshold, pseudo


class SelfAdaptiveThreshold(_MaskingPolicy):
    """FreeMatch's self-adaptive global x local threshold, with its fairness loss.

    The global threshold ``tau_``, an EMA of the batches' mean confidence, is
    scaled per class by the EMA class marginal ``p_tilde_``.

    Parameters
    ----------
    momentum : float, default=0.999
        EMA momentum of the statistics, in [0, 1).
    saf_sign : {-1, 1}, default=-1
        Sign of the fairness loss: ``-1`` is the paper's formula, ``1`` pulls
        the batch mean towards the normalised marginal.

    Attributes
    ----------
    n_classes_ : int
        Number of classes of the fit.
    tau_ : float
        Global threshold (EMA of the batches' mean confidence).
    p_tilde_ : ndarray of shape (n_classes,)
        EMA of the mean predicted class probabilities.
    label_hist_ : ndarray of shape (n_classes,)
        EMA of the pseudo-label histogram.
    thresholds_ : ndarray of shape (n_classes,)
        Per-class thresholds ``tau_ * p_tilde_ / max(p_tilde_)``.

    See Also
    --------
    FixedThreshold : FixMatch's fixed threshold.
    ClassAdaptiveThreshold : Adsh's per-class thresholds for imbalanced classes.
    FreeMatchClassifier : The net that uses this policy by default.

    References
    ----------
    Y. Wang, H. Chen, Q. Heng, W. Hou, Y. Fan, Z. Wu, J. Wang, M. Savvides,
    T. Shinozaki, B. Raj, B. Schiele and X. Xie. "FreeMatch: Self-adaptive
    Thresholding for Semi-supervised Learning". ICLR 2023.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import SelfAdaptiveThreshold
    >>> policy = SelfAdaptiveThreshold(momentum=0.5).start(2)
    >>> policy.tau_
    0.5
    >>> _ = policy.update(torch.tensor([[0.9, 0.1], [0.7, 0.3]]))
    >>> round(policy.tau_, 4)
    0.65
    """

    _parameter_constraints: dict = {
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "saf_sign": [Options(Integral, {-1, 1})],
    }

    def __init__(self, momentum=0.999, saf_sign=-1):
        self.momentum = momentum
        self.saf_sign = saf_sign

    def _reset(self, labeled_counts):
        c = self.n_classes_
        self.tau_ = 1.0 / c
        self.p_tilde_ = np.full(c, 1.0 / c)
        self.label_hist_ = np.full(c, 1.0 / c)
        self._set_thresholds()

    def _set_thresholds(self):
        self.thresholds_ = self.tau_ * self.p_tilde_ / self.p_tilde_.max()

    def update(self, probs_weak):
        q = _as_numpy(probs_weak)
        if q.shape[0] == 0:
            return self
        m = float(self.momentum)
        self.tau_ = m * self.tau_ + (1 - m) * float(q.max(axis=1).mean())
        self.p_tilde_ = m * self.p_tilde_ + (1 - m) * q.mean(axis=0)
        hist = np.bincount(q.argmax(axis=1), minlength=self.n_classes_) / q.shape[0]
        self.label_hist_ = m * self.label_hist_ + (1 - m) * hist
        self._set_thresholds()
        return self

    def mask(self, probs_weak):
        conf, pseudo = probs_weak.max(dim=1)
        return conf >= self._thresholds_for(probs_weak)[pseudo], pseudo

    def fairness_loss(self, probs_strong, mask):
        """Return the fairness loss of a batch.

        Parameters
        ----------
        probs_strong : tensor of shape (n, n_classes)
            The batch's strong-view probabilities, with their gradient.
        mask : bool tensor of shape (n,)
            This policy's mask of the batch.

        Returns
        -------
        loss : scalar tensor
            FreeMatch's self-adaptive fairness loss.
        """
        return self_adaptive_fairness(probs_strong, mask, self.p_tilde_, self.label_hist_, self.saf_sign)


class ClassAdaptiveThreshold(_MaskingPolicy):
    """Adsh's class-adaptive thresholds for class-imbalanced data.

    Each epoch every class gets the threshold that keeps the fraction
    ``rho_`` of its predicted rows that the majority class keeps at ``threshold``.

    Parameters
    ----------
    threshold : float, default=0.95
        Majority class threshold and cap of the others, in (0, 1].

    Attributes
    ----------
    n_classes_ : int
        Number of classes of the fit.
    majority_class_ : int
        Index of the class with the most labeled rows.
    rho_ : float or None
        Majority class fraction at or above ``threshold`` (``None`` before an update).
    thresholds_ : ndarray of shape (n_classes,)
        Per-class thresholds ``tau_k``.

    See Also
    --------
    FixedThreshold : FixMatch's fixed threshold.
    SelfAdaptiveThreshold : FreeMatch's thresholds, learned from the confidences.
    AdshClassifier : The net that uses this policy by default.

    References
    ----------
    L.-Z. Guo and Y.-F. Li. "Class-Imbalanced Semi-Supervised Learning with
    Adaptive Thresholding". ICML 2022.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import ClassAdaptiveThreshold
    >>> policy = ClassAdaptiveThreshold(threshold=0.9).start(2, labeled_counts=[5, 1])
    >>> probs = torch.tensor([[0.95, 0.05], [0.92, 0.08], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]],
    ...                      dtype=torch.float64)
    >>> policy.update(probs).thresholds_.tolist()  # rho = 2/3 of class 0 pass 0.9
    [0.9, 0.7]
    """

    update_every = "epoch"
    _parameter_constraints: dict = {"threshold": _THRESHOLD}

    def __init__(self, threshold=0.95):
        self.threshold = threshold

    def _reset(self, labeled_counts):
        counts = np.zeros(self.n_classes_) if labeled_counts is None else np.asarray(labeled_counts)
        self.majority_class_ = int(np.argmax(counts))
        self.thresholds_ = np.full(self.n_classes_, float(self.threshold))
        self.rho_ = None

    def update(self, probs_weak):
        q = _as_numpy(probs_weak)
        conf, pred = q.max(axis=1), q.argmax(axis=1)
        top = float(self.threshold)
        maj = conf[pred == self.majority_class_]
        rho = float((maj >= top).sum()) / maj.shape[0] if maj.shape[0] else 0.0
        self.rho_ = rho
        tau = np.full(self.n_classes_, top)
        if rho > 0:
            for k in range(self.n_classes_):
                c_k = np.sort(conf[pred == k])[::-1]
                if c_k.shape[0]:
                    tau[k] = min(top, float(c_k[max(0, int(math.floor(c_k.shape[0] * rho + 0.5)) - 1)]))
        self.thresholds_ = tau
        return self

    def mask(self, probs_weak):
        # rectified pseudo-labels: r = q / thresholds_, keep max r >= 1
        best, pseudo = (probs_weak / self._thresholds_for(probs_weak)).max(dim=1)
        return best >= 1, pseudo
