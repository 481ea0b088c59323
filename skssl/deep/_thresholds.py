"""Masking policies: which unlabeled rows get a pseudo-label, and which one.

Each policy is a small object. The net calls ``start(n_classes,
labeled_counts)`` once per fit (on a deep copy of what the user passed), then
either ``update(probs_weak)`` on every unlabeled batch *before* masking
(``update_every == "batch"``) or on the probabilities of the whole unlabeled
set after every epoch (``update_every == "epoch"``), and ``mask(probs_weak) ->
(mask, pseudo_labels)`` on every batch. ``thresholds()`` returns the current
per-class thresholds, recorded in the net's history.

:class:`FixedThreshold` (FixMatch)
    ``mask = max q >= threshold``, ``pseudo = argmax q``.

:class:`SelfAdaptiveThreshold` (FreeMatch SAT, paper 001 section 4.1)
    State starts uniform: ``tau = 1/C``, ``p_tilde = 1/C``, ``label_hist = 1/C``.
    Each batch, with momentum ``m``: ``tau <- m tau + (1-m) mean(max q)``,
    ``p_tilde <- m p_tilde + (1-m) mean(q)``, ``label_hist <- m label_hist +
    (1-m) hist(argmax q) / n``. Mask: ``max q >= tau * p_tilde[argmax q] /
    max(p_tilde)`` (paper's ``>``; ``>=`` so that the very first batch, where
    every threshold is 1/C, is consistent with FixMatch's ``>=``).
    :meth:`SelfAdaptiveThreshold.fairness_loss` is SAF (section 4.2), 0 when
    no row passes the mask. Its sign is an option, ``saf_sign``:

    * ``-1``: ``L_f = -H(a, b) = sum_c a_c log b_c`` with ``a = SumNorm(p_tilde
      / label_hist)`` and ``b = SumNorm(mean_masked(Q) / hist_masked(Q))`` --
      the paper's formula as printed, and what USB's code computes. Minimising
      it pushes the batch mean *away* from the marginal (a diversity push).
    * ``+1``: ``L_f = H(a, b)``, the cross-entropy that pulls the batch mean
      towards the normalised marginal, which is what the paper's sentence
      describes.

    DESIGN section 4 reads the printed formula and USB's code as opposite
    signs; written out they are the same (``-H(a, b) = sum a log b``), and the
    opposite is the cross-entropy of the paper's sentence. ``-1`` is the
    default: it won the MNIST benchmark at 2000 steps with 1 and 4 labels per
    class (``benchmarks/results/deep_ssl.md``).

    Classes with a zero masked histogram are dropped from both vectors before
    normalising (the ratio is undefined there).

:class:`ClassAdaptiveThreshold` (Adsh, paper 000 Algorithm 2, official semantics)
    ``tau_k`` start at ``tau_1`` (plain FixMatch until the first update). After
    each epoch, from the weak-view probabilities of the whole unlabeled set:
    ``C_k`` = descending confidences of the rows predicted ``k``; ``rho`` =
    fraction of the majority class's rows with confidence ``>= tau_1``;
    ``tau_k = min(tau_1, C_k[max(0, round(n_k rho) - 1)])``. Masking uses the
    rectified label: ``r = q / tau``, ``pseudo = argmax r``, ``mask = max r >= 1``.
    Decisions:

    * the majority class is the class with the most *labeled* rows (ties: the
      smallest class index); USB assumes class 0, which is wrong once classes
      are sorted by label rather than by size;
    * ``round`` is half-up (``floor(x + 0.5)``), not Python's half-to-even;
    * no row of the whole set predicted as the majority class, or none of them
      at or above ``tau_1`` (``rho = 0``): every ``tau_k`` falls back to
      ``tau_1``, i.e. FixMatch. The paper's Algorithm 2 initialises ``rho = 1``
      and would then accept *every* row of every class, the least safe choice
      at the moment the model is least trustworthy;
    * a class with no predicted row keeps ``tau_k = tau_1``.
"""

import math
import numbers

import numpy as np
import torch

__all__ = ["FixedThreshold", "SelfAdaptiveThreshold", "ClassAdaptiveThreshold"]


def _check_threshold(value, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value) or not 0 < value <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}.")


def _check_momentum(value, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0 <= value < 1:
        raise ValueError(f"{name} must be a number in [0, 1), got {value!r}.")


class FixedThreshold:
    """FixMatch's fixed confidence threshold.

    Parameters
    ----------
    threshold : float, default=0.95
        A row is kept when its largest weak-view probability is at least this.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import FixedThreshold
    >>> policy = FixedThreshold(0.9).start(2)
    >>> policy.mask(torch.tensor([[0.95, 0.05], [0.6, 0.4]]))
    (tensor([ True, False]), tensor([0, 0]))
    """

    update_every = "batch"

    def __init__(self, threshold=0.95):
        self.threshold = threshold

    def start(self, n_classes, labeled_counts=None):
        """Reset the state for a fit with ``n_classes`` classes."""
        _check_threshold(self.threshold, "threshold")
        self.n_classes_ = int(n_classes)
        return self

    def update(self, probs_weak):
        """Nothing to update: the threshold is fixed."""
        return self

    def mask(self, probs_weak):
        """Return ``(mask, pseudo_labels)`` for a batch of weak-view probabilities."""
        conf, pseudo = probs_weak.max(dim=1)
        return conf >= self.threshold, pseudo

    def thresholds(self):
        """Per-class thresholds as a list of floats."""
        return [float(self.threshold)] * self.n_classes_


class SelfAdaptiveThreshold:
    """FreeMatch's self-adaptive global x local threshold, with the SAF loss.

    Parameters
    ----------
    momentum : float, default=0.999
        EMA momentum ``m`` of the global confidence, the class marginal and
        the pseudo-label histogram.
    saf_sign : {-1, 1}, default=-1
        Sign of the self-adaptive fairness loss (see the module docstring):
        ``-1`` is the printed formula / USB code (the default, better on the
        MNIST benchmark), ``1`` pulls the batch mean towards the normalised
        marginal.

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

    update_every = "batch"

    def __init__(self, momentum=0.999, saf_sign=-1):
        self.momentum = momentum
        self.saf_sign = saf_sign

    def start(self, n_classes, labeled_counts=None):
        """Reset the state to uniform for ``n_classes`` classes."""
        _check_momentum(self.momentum, "momentum")
        if self.saf_sign not in (-1, 1):
            raise ValueError(f"saf_sign must be -1 or 1, got {self.saf_sign!r}.")
        c = int(n_classes)
        self.n_classes_ = c
        self.tau_ = 1.0 / c
        self.p_tilde_ = torch.full((c,), 1.0 / c, dtype=torch.float64)
        self.label_hist_ = torch.full((c,), 1.0 / c, dtype=torch.float64)
        return self

    def update(self, probs_weak):
        """EMA update of the global confidence, class marginal and histogram."""
        q = probs_weak.detach().to("cpu", torch.float64)
        if q.shape[0] == 0:
            return self
        m = float(self.momentum)
        conf, pseudo = q.max(dim=1)
        self.tau_ = m * self.tau_ + (1 - m) * float(conf.mean())
        self.p_tilde_ = m * self.p_tilde_ + (1 - m) * q.mean(dim=0)
        hist = torch.bincount(pseudo, minlength=self.n_classes_).to(torch.float64) / q.shape[0]
        self.label_hist_ = m * self.label_hist_ + (1 - m) * hist
        return self

    def class_thresholds_(self):
        return self.tau_ * self.p_tilde_ / self.p_tilde_.max()

    def mask(self, probs_weak):
        """Return ``(mask, pseudo_labels)``: ``max q >= tau * MaxNorm(p_tilde)[argmax q]``."""
        conf, pseudo = probs_weak.max(dim=1)
        thr = self.class_thresholds_().to(probs_weak.device, probs_weak.dtype)
        return conf >= thr[pseudo], pseudo

    def thresholds(self):
        """Per-class thresholds as a list of floats."""
        return [float(v) for v in self.class_thresholds_()]

    def fairness_loss(self, probs_strong, mask):
        """Self-adaptive fairness loss over the masked strong-view probabilities.

        Parameters
        ----------
        probs_strong : tensor of shape (n, n_classes)
            Strong-view probabilities (with gradient).
        mask : bool tensor of shape (n,)
            Rows that passed the threshold.

        Returns
        -------
        loss : scalar tensor
            0 (no gradient path) when no row passes the mask.
        """
        if not bool(mask.any()):
            return probs_strong.sum() * 0.0
        p = probs_strong[mask]
        c = self.n_classes_
        hist_s = torch.bincount(p.detach().argmax(dim=1), minlength=c).to(p.dtype) / p.shape[0]
        keep = hist_s > 0
        marginal = (self.p_tilde_ / self.label_hist_.clamp_min(1e-12)).to(p.device, p.dtype)[keep]
        a = marginal / marginal.sum()
        b = p.mean(dim=0)[keep] / hist_s[keep]
        b = b / b.sum()
        cross_entropy = -(a * torch.log(b.clamp_min(1e-12))).sum()
        return self.saf_sign * cross_entropy


class ClassAdaptiveThreshold:
    """Adsh's class-adaptive thresholds (paper 000, Algorithm 2).

    Parameters
    ----------
    tau_1 : float, default=0.95
        Threshold of the majority class, and cap of every class threshold.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import ClassAdaptiveThreshold
    >>> policy = ClassAdaptiveThreshold(tau_1=0.9).start(2, labeled_counts=[5, 1])
    >>> probs = torch.tensor([[0.95, 0.05], [0.92, 0.08], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]],
    ...                      dtype=torch.float64)
    >>> policy.update(probs).thresholds()  # rho = 2/3 of class 0 pass 0.9
    [0.9, 0.7]
    """

    update_every = "epoch"

    def __init__(self, tau_1=0.95):
        self.tau_1 = tau_1

    def start(self, n_classes, labeled_counts=None):
        """Reset ``tau_k = tau_1``; the majority class is the most labeled one."""
        _check_threshold(self.tau_1, "tau_1")
        self.n_classes_ = int(n_classes)
        counts = np.zeros(self.n_classes_) if labeled_counts is None else np.asarray(labeled_counts)
        self.majority_class_ = int(np.argmax(counts))
        self.tau_ = torch.full((self.n_classes_,), float(self.tau_1), dtype=torch.float64)
        self.rho_ = None
        return self

    def update(self, probs_weak):
        """Recompute every ``tau_k`` from the probabilities of the whole unlabeled set."""
        q = probs_weak.detach().to("cpu", torch.float64)
        conf, pred = q.max(dim=1)
        tau_1 = float(self.tau_1)
        maj = conf[pred == self.majority_class_]
        rho = float((maj >= tau_1).sum()) / maj.shape[0] if maj.shape[0] else 0.0
        self.rho_ = rho
        tau = torch.full((self.n_classes_,), tau_1, dtype=torch.float64)
        if rho > 0:
            for k in range(self.n_classes_):
                c_k = torch.sort(conf[pred == k], descending=True).values
                if c_k.shape[0] == 0:
                    continue
                pos = max(0, int(math.floor(c_k.shape[0] * rho + 0.5)) - 1)
                tau[k] = min(tau_1, float(c_k[pos]))
        self.tau_ = tau
        return self

    def mask(self, probs_weak):
        """Rectified pseudo-labels: ``r = q / tau``, keep ``max r >= 1``."""
        r = probs_weak / self.tau_.to(probs_weak.device, probs_weak.dtype)
        best, pseudo = r.max(dim=1)
        return best >= 1, pseudo

    def thresholds(self):
        """Per-class thresholds as a list of floats."""
        return [float(v) for v in self.tau_]
