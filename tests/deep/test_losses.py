"""The loss terms as pure functions, against hand computations (no net)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from skssl.deep._losses import masked_cross_entropy, self_adaptive_fairness, weighted_mean  # noqa: E402


def t(a, **kw):
    return torch.tensor(a, dtype=torch.float64, **kw)


def test_weighted_mean_divides_by_the_batch_size():
    per_row = t([1.0, 2.0, 4.0])
    assert float(weighted_mean(per_row)) == pytest.approx(7 / 3)
    assert float(weighted_mean(per_row, t([2.0, 0.0, 1.0]))) == pytest.approx((2 + 0 + 4) / 3)
    ones = weighted_mean(per_row, torch.ones(3))
    assert torch.equal(ones, weighted_mean(per_row))  # weights of ones are exactly no weights


def test_masked_cross_entropy_by_hand():
    logits = t([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    pseudo = torch.tensor([0, 0, 1])
    mask = torch.tensor([True, False, True])
    log_softmax = logits.numpy() - np.log(np.exp(logits.numpy()).sum(1, keepdims=True))
    expected = (-log_softmax[0, 0] + 0.0 - log_softmax[2, 1]) / 3  # averaged over all rows, masked or not
    assert float(masked_cross_entropy(logits, pseudo, mask)) == pytest.approx(expected)


def test_masked_cross_entropy_with_empty_mask_is_zero_and_keeps_the_graph():
    logits = t([[2.0, 0.0], [0.0, 1.0]], requires_grad=True)
    loss = masked_cross_entropy(logits, torch.tensor([0, 1]), torch.tensor([False, False]))
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert torch.all(logits.grad == 0)


def test_self_adaptive_fairness_by_hand_and_sign():
    p_tilde = np.array([0.4, 0.5, 0.1])
    label_hist = np.array([0.5, 0.5, 0.0])
    ps = t([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    mask = torch.tensor([True, True, True, False])
    # masked rows 0..2 predict [0, 0, 1]: hist = [2/3, 1/3, 0], class 2 dropped
    a = p_tilde[:2] / label_hist[:2]
    a = a / a.sum()
    b = ps.numpy()[:3].mean(0)[:2] / np.array([2 / 3, 1 / 3])
    b = b / b.sum()
    cross_entropy = -(a * np.log(b)).sum()
    assert float(self_adaptive_fairness(ps, mask, p_tilde, label_hist, sign=1)) == pytest.approx(cross_entropy)
    assert float(self_adaptive_fairness(ps, mask, p_tilde, label_hist, sign=-1)) == pytest.approx(-cross_entropy)


def test_self_adaptive_fairness_without_masked_rows_is_zero():
    ps = t([[0.5, 0.5]], requires_grad=True)
    loss = self_adaptive_fairness(ps, torch.tensor([False]), [0.5, 0.5], [0.5, 0.5])
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert torch.all(ps.grad == 0)
