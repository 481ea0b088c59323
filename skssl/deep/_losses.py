"""The nets' loss terms as functions of tensors.

A step minimises ``labeled + unlabeled_weight * unlabeled`` (FreeMatch adds
``fairness_weight * fairness``): :func:`weighted_mean` of the labeled rows,
FixMatch's :func:`masked_cross_entropy` and FreeMatch's
:func:`self_adaptive_fairness` (Wang et al., 2023).
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

    ``sign * H(a, b)``, ``H(a, b) = -sum_c a_c log b_c``, with
    ``a = SumNorm(p_tilde / label_hist)`` and ``b`` the same ratio on the batch's
    masked rows; classes no masked row predicts are dropped.

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
