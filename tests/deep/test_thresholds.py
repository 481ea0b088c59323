"""Masking policies against hand-computed cases."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from skssl.deep import ClassAdaptiveThreshold, FixedThreshold, SelfAdaptiveThreshold  # noqa: E402


def t(a):
    return torch.tensor(a, dtype=torch.float64)


def test_fixed_threshold_mask_and_pseudo():
    pol = FixedThreshold(0.8).start(3)
    mask, pseudo = pol.mask(t([[0.8, 0.1, 0.1], [0.5, 0.4, 0.1], [0.05, 0.05, 0.9]]))
    assert mask.tolist() == [True, False, True]
    assert pseudo.tolist() == [0, 0, 2]
    assert pol.thresholds_.tolist() == [0.8] * 3


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), "0.9", True])
def test_thresholds_outside_unit_interval_raise(bad):
    with pytest.raises(ValueError, match="threshold"):
        FixedThreshold(bad).start(2)
    with pytest.raises(ValueError, match="threshold"):
        ClassAdaptiveThreshold(bad).start(2, [1, 1])


def test_threshold_one_is_allowed():
    assert FixedThreshold(1.0).start(2).mask(t([[1.0, 0.0], [0.9, 0.1]]))[0].tolist() == [True, False]


def test_sat_starts_uniform_and_tracks_ema():
    m = 0.9
    pol = SelfAdaptiveThreshold(momentum=m).start(4)
    assert pol.tau_ == pytest.approx(0.25)
    assert pol.thresholds_.tolist() == pytest.approx([0.25] * 4)
    batches = [
        t([[0.7, 0.1, 0.1, 0.1], [0.1, 0.6, 0.2, 0.1]]),
        t([[0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25], [0.1, 0.1, 0.1, 0.7]]),
    ]
    tau, p, h = 0.25, np.full(4, 0.25), np.full(4, 0.25)
    for q in batches:
        pol.update(q)
        qn = q.numpy()
        tau = m * tau + (1 - m) * qn.max(1).mean()
        p = m * p + (1 - m) * qn.mean(0)
        h = m * h + (1 - m) * np.bincount(qn.argmax(1), minlength=4) / qn.shape[0]
        assert pol.tau_ == pytest.approx(tau)
        np.testing.assert_allclose(pol.p_tilde_, p)
        np.testing.assert_allclose(pol.label_hist_, h)
        np.testing.assert_allclose(pol.thresholds_.tolist(), tau * p / p.max())
    # mask: max q >= tau * p[argmax] / max p
    q = t([[0.3, 0.3, 0.2, 0.2], [0.1, 0.1, 0.1, 0.7], [0.26, 0.25, 0.25, 0.24]])
    thr = tau * p / p.max()
    mask, pseudo = pol.mask(q)
    expected = [q.numpy()[i].max() >= thr[q.numpy()[i].argmax()] for i in range(3)]
    assert mask.tolist() == expected
    assert pseudo.tolist() == [0, 3, 0]


def test_saf_matches_hand_computation_and_sign_option():
    pol = SelfAdaptiveThreshold(momentum=0.0, saf_sign=1).start(3)
    pol.update(t([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]]))  # momentum 0: state = this batch
    ps = t([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    mask = torch.tensor([True, True, True, False])
    got = float(pol.fairness_loss(ps, mask))
    # by hand: masked rows 0..2, hist_s = [2/3, 1/3, 0] -> class 2 dropped
    p_tilde = np.array([0.4, 0.5, 0.1])
    label_hist = np.array([0.5, 0.5, 0.0])
    a = p_tilde[:2] / label_hist[:2]
    a = a / a.sum()
    mean_s = ps.numpy()[:3].mean(0)[:2]
    b = mean_s / np.array([2 / 3, 1 / 3])
    b = b / b.sum()
    assert got == pytest.approx(-(a * np.log(b)).sum())
    pol.saf_sign = -1
    assert float(pol.fairness_loss(ps, mask)) == pytest.approx((a * np.log(b)).sum())


def test_saf_is_zero_without_masked_rows_and_keeps_graph():
    pol = SelfAdaptiveThreshold().start(2)
    ps = torch.tensor([[0.5, 0.5]], requires_grad=True)
    loss = pol.fairness_loss(ps, torch.tensor([False]))
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert torch.all(ps.grad == 0)


def test_bad_sat_parameters():
    with pytest.raises(ValueError, match="momentum"):
        SelfAdaptiveThreshold(momentum=1.0).start(2)
    with pytest.raises(ValueError, match="saf_sign"):
        SelfAdaptiveThreshold(saf_sign=0).start(2)


def test_adsh_thresholds_from_known_confidence_table():
    # labeled counts make class 1 the majority (not class 0)
    pol = ClassAdaptiveThreshold(threshold=0.9).start(3, labeled_counts=[2, 10, 1])
    assert pol.majority_class_ == 1
    assert pol.thresholds_.tolist() == [0.9, 0.9, 0.9]
    rows = (
        [[0.96, 0.02, 0.02], [0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.5, 0.3, 0.2]]  # class 0
        + [[0.02, 0.97, 0.01], [0.05, 0.93, 0.02], [0.1, 0.85, 0.05], [0.2, 0.7, 0.1]]  # class 1
        + [[0.1, 0.1, 0.8], [0.2, 0.2, 0.6]]  # class 2
    )
    pol.update(t(rows))
    # majority class 1: 2 of 4 at or above 0.9 -> rho = 0.5
    assert pol.rho_ == pytest.approx(0.5)
    # class 0: n=5, round-half-up(2.5)=3 -> C_0[2] = 0.7; class 1: n=4 -> 2 -> C_1[1] = 0.93 -> capped 0.9
    # class 2: n=2 -> 1 -> C_2[0] = 0.8
    assert pol.thresholds_.tolist() == pytest.approx([0.7, 0.9, 0.8])
    # rectified pseudo-label: r = q / tau
    mask, pseudo = pol.mask(t([[0.5, 0.0, 0.5], [0.72, 0.28, 0.0], [0.3, 0.6, 0.1]]))
    # row 0: r = [0.714, 0, 0.625] -> class 0 (argmax q would tie 0 and 2); row 1: r_0 = 1.03
    assert pseudo.tolist() == [0, 0, 1]
    assert mask.tolist() == [False, True, False]


def test_adsh_rectified_label_can_differ_from_argmax():
    pol = ClassAdaptiveThreshold(threshold=0.95).start(2, labeled_counts=[5, 1])
    pol.thresholds_ = np.array([0.95, 0.5])
    mask, pseudo = pol.mask(t([[0.55, 0.45]]))
    assert pseudo.tolist() == [1] and mask.tolist() == [False]
    mask, pseudo = pol.mask(t([[0.45, 0.55]]))
    assert pseudo.tolist() == [1] and mask.tolist() == [True]


def test_adsh_edge_cases_fall_back_to_threshold():
    pol = ClassAdaptiveThreshold(threshold=0.9).start(3, labeled_counts=[5, 1, 1])
    # nobody predicted as the majority class 0
    pol.update(t([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]))
    assert pol.thresholds_.tolist() == [0.9, 0.9, 0.9]
    # majority rows exist but none reaches the threshold (rho = 0): FixMatch thresholds
    pol.update(t([[0.6, 0.2, 0.2], [0.1, 0.8, 0.1]]))
    assert pol.rho_ == 0 and pol.thresholds_.tolist() == [0.9, 0.9, 0.9]
    # class 2 never predicted keeps the threshold
    pol.update(t([[0.95, 0.05, 0.0], [0.3, 0.7, 0.0]]))
    assert pol.thresholds_.tolist() == pytest.approx([0.9, 0.7, 0.9])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 5),
    st.integers(1, 12),
    st.integers(0, 2**31 - 1),
    st.sampled_from(["uniform", "one_class", "peaked"]),
)
def test_policies_never_produce_nan(n_classes, n_rows, seed, kind):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n_rows, n_classes, generator=g, dtype=torch.float64)
    if kind == "uniform":
        logits = torch.zeros_like(logits)  # no row passes a high threshold
    elif kind == "one_class":
        logits[:, 0] += 20  # one class only in the batch, others never predicted
    else:
        logits *= 10
    q = torch.softmax(logits, dim=1)
    for pol in (FixedThreshold(0.95), SelfAdaptiveThreshold(momentum=0.5), ClassAdaptiveThreshold(0.95)):
        pol.start(n_classes, np.arange(n_classes)[::-1] + 1)
        pol.update(q)
        mask, pseudo = pol.mask(q)
        assert mask.shape == (n_rows,) and pseudo.shape == (n_rows,)
        assert np.all(np.isfinite(pol.thresholds_.tolist()))
        assert all(0 < v <= 1 for v in pol.thresholds_.tolist())
        if isinstance(pol, SelfAdaptiveThreshold):
            ps = q.clone().requires_grad_(True)
            loss = pol.fairness_loss(ps, mask)
            loss.backward()
            assert torch.isfinite(loss) and torch.all(torch.isfinite(ps.grad))
