"""Masking policies: which unlabeled rows get a pseudo-label, and which one.

A policy is a scikit-learn style parameter object, tuned through the net as
``masking__threshold``; the net fits a clone (``masking_``). The net calls
``start(n_classes, labeled_counts)`` once per fit, ``update(probs_weak)`` per
batch or per epoch (``update_every``) and ``mask(probs_weak) -> (mask,
pseudo_labels)`` per batch. The fitted state is plain numpy (``thresholds_``
is recorded in the history every epoch).

* :class:`FixedThreshold` -- FixMatch: ``max q >= threshold``.
* :class:`SelfAdaptiveThreshold` -- FreeMatch's self-adaptive thresholds
  (SAT) and fairness loss (SAF, sign ``saf_sign``).
* :class:`ClassAdaptiveThreshold` -- Adsh's adaptive thresholds (Algorithm 2).

Design decisions: user guide, Implementation decisions (deep, self-training), "Masking policies".
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
    """What every policy shares: parameter validation in ``start`` and the tensor side of ``mask``."""

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
            Number of labeled rows per class (used by
            :class:`ClassAdaptiveThreshold`).

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
            Weak-view probabilities of an unlabeled batch, or of the whole
            unlabeled set for a policy updated once per epoch.

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

    An unlabeled row gets the pseudo-label ``argmax q`` of its weak-view
    probabilities ``q`` when ``max q >= threshold``; the threshold is the same
    for every class and never changes.

    Parameters
    ----------
    threshold : float, default=0.95
        A row gets a pseudo-label when its largest weak-view probability is at
        least this, in (0, 1].

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
        # nothing to update: the threshold is fixed (docstring on _MaskingPolicy)
        return self

    def mask(self, probs_weak):
        # keep max q >= threshold, pseudo-label argmax q
        conf, pseudo = probs_weak.max(dim=1)
        return conf >= self.threshold, pseudo


class SelfAdaptiveThreshold(_MaskingPolicy):
    """FreeMatch's self-adaptive global x local threshold, with its fairness loss.

    The global threshold ``tau_`` is an EMA of the mean confidence of the
    unlabeled batches (it starts at ``1 / n_classes`` and rises as the model
    grows confident); each class's threshold is ``tau_`` scaled by the class's
    share of the EMA class marginal ``p_tilde_``, so rarely predicted classes
    get a lower bar.

    Parameters
    ----------
    momentum : float, default=0.999
        EMA momentum ``m`` of the global confidence, the class marginal and
        the pseudo-label histogram, in [0, 1).
    saf_sign : {-1, 1}, default=-1
        Sign of the self-adaptive fairness loss: ``-1`` is the paper's printed
        formula and the authors' code (the default: better on MNIST with 1 and
        4 labels per class), ``1`` pulls the batch mean towards the normalised
        marginal.

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
        # one EMA step of tau_, p_tilde_ and label_hist_ (docstring on _MaskingPolicy)
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
        # keep max q >= thresholds_[argmax q], pseudo-label argmax q
        conf, pseudo = probs_weak.max(dim=1)
        return conf >= self._thresholds_for(probs_weak)[pseudo], pseudo

    def fairness_loss(self, probs_strong, mask):
        """Return the fairness loss of a batch with this policy's marginal and histogram.

        Parameters
        ----------
        probs_strong : tensor of shape (n, n_classes)
            The batch's strong-view probabilities, with their gradient.
        mask : bool tensor of shape (n,)
            This policy's mask of the batch.

        Returns
        -------
        loss : scalar tensor
            :func:`skssl.deep._losses.self_adaptive_fairness` with ``p_tilde_``,
            ``label_hist_`` and ``saf_sign``.
        """
        return self_adaptive_fairness(probs_strong, mask, self.p_tilde_, self.label_hist_, self.saf_sign)


class ClassAdaptiveThreshold(_MaskingPolicy):
    """Adsh's class-adaptive thresholds for class-imbalanced data.

    After every epoch, ``rho_`` is the fraction of the majority class's
    predicted unlabeled rows at or above ``threshold``; every class then gets
    the threshold that keeps the same fraction of its own predicted rows
    (capped at ``threshold``), so minority classes, predicted with less
    confidence, still get pseudo-labels.

    Parameters
    ----------
    threshold : float, default=0.95
        Threshold of the majority class (the class with the most labeled
        rows) and cap of every class threshold, in (0, 1].

    Attributes
    ----------
    n_classes_ : int
        Number of classes of the fit.
    majority_class_ : int
        Index of the class with the most labeled rows.
    rho_ : float or None
        Fraction of the majority class's predicted rows at or above
        ``threshold`` at the last update (``None`` before it).
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
        # recompute every class threshold from the whole unlabeled set (docstring on _MaskingPolicy)
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
