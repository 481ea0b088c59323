"""The loss terms of the nets, as pure functions of tensors.

One semi-supervised step of the core net minimises
``labeled + unlabeled_weight * unlabeled``, and
:class:`~skssl.deep.FreeMatchClassifier` adds ``fairness_weight * fairness``.

* ``labeled``: the batch mean of the criterion's per-row loss, each row times
  its ``sample_weight`` (:func:`weighted_mean`; divided by the batch size, so
  weights of ones give the unweighted loss);
* ``unlabeled``: FixMatch's masked pseudo-label cross-entropy on the strong
  view (:func:`masked_cross_entropy`), averaged over all unlabeled rows;
* ``fairness``: FreeMatch's self-adaptive fairness (:func:`self_adaptive_fairness`).
"""

import torch
import torch.nn.functional as F

__all__ = ["masked_cross_entropy", "self_adaptive_fairness", "weighted_mean"]


def weighted_mean(per_row, weight=None):
    """Mean of per-row losses, each times its weight (``None``: plain mean).

    Parameters
    ----------
    per_row : tensor of shape (n,)
        Per-row losses.
    weight : tensor of shape (n,) or None
        Non-negative row weights.

    Returns
    -------
    loss : scalar tensor
    """
    if weight is None:
        return per_row.mean()
    return (per_row * weight.to(per_row.dtype)).mean()


def masked_cross_entropy(logits, pseudo_labels, mask):
    """FixMatch's unlabeled loss: ``mean(mask * CE(logits, pseudo_labels))``.

    Parameters
    ----------
    logits : tensor of shape (n, n_classes)
        Strong-view logits.
    pseudo_labels : int tensor of shape (n,)
    mask : bool tensor of shape (n,)
        Rows whose pseudo-label is kept.

    Returns
    -------
    loss : scalar tensor
        Averaged over all ``n`` rows; 0 (with a gradient path) when no row is kept.
    """
    ce = F.cross_entropy(logits, pseudo_labels, reduction="none")
    return (ce * mask.to(ce.dtype)).mean()


def self_adaptive_fairness(probs_strong, mask, p_tilde, label_hist, sign=-1):
    """FreeMatch's self-adaptive fairness loss over the masked strong-view probabilities.

    With ``a = SumNorm(p_tilde / label_hist)`` (the running class marginal over
    the running pseudo-label histogram) and ``b = SumNorm(mean_masked(p) /
    hist_masked(p))`` (the same ratio on the masked rows of the batch), the loss
    is ``sign * H(a, b)`` with ``H(a, b) = -sum_c a_c log b_c``. ``sign=-1`` is
    the paper's printed formula; ``sign=1`` is the cross-entropy that pulls the
    batch towards the marginal (see :class:`~skssl.deep.SelfAdaptiveThreshold`).
    Classes that no masked row predicts are dropped from both vectors before
    normalising (the ratio is undefined there).

    Parameters
    ----------
    probs_strong : tensor of shape (n, n_classes)
        Strong-view probabilities (with gradient).
    mask : bool tensor of shape (n,)
        Rows that passed the threshold.
    p_tilde, label_hist : array-like of shape (n_classes,)
        The running class marginal and pseudo-label histogram.
    sign : {-1, 1}, default=-1

    Returns
    -------
    loss : scalar tensor
        0 (with a gradient path) when no row passes the mask.
    """
    if not bool(mask.any()):
        return probs_strong.sum() * 0.0
    p = probs_strong[mask]
    c = p.shape[1]
    hist_s = torch.bincount(p.detach().argmax(dim=1), minlength=c).to(p.dtype) / p.shape[0]
    keep = hist_s > 0
    p_tilde = torch.as_tensor(p_tilde, dtype=torch.float64)
    label_hist = torch.as_tensor(label_hist, dtype=torch.float64)
    marginal = (p_tilde / label_hist.clamp_min(1e-12)).to(p.device, p.dtype)[keep]
    a = marginal / marginal.sum()
    b = p.mean(dim=0)[keep] / hist_s[keep]
    b = b / b.sum()
    return sign * -(a * torch.log(b.clamp_min(1e-12))).sum()
