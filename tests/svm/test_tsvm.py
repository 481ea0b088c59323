"""TSVM with multiple switching: switching rule and the balance constraint."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm.solvers import _tsvm
from skssl.svm.solvers._mfn import l2_svm_mfn, mfn_objective
from skssl.svm.kernels._validation import as_float64_design
from skssl.svm.solvers._tsvm import n_positive, switch_labels, tsvm


def _switch_reference(labels, outputs, unlabeled, S):
    """SVMlin's switching rule written as plain loops (the reference)."""
    labels = labels.copy()
    pos = sorted((outputs[j], j) for j in unlabeled if labels[j] > 0 and outputs[j] < 1)
    neg = sorted((-outputs[j], j) for j in unlabeled if labels[j] < 0 and -outputs[j] < 1)
    s = 0
    while s < S and s < len(pos) and s < len(neg) and pos[s][0] < -neg[s][0]:
        labels[pos[s][1]] = -1.0
        labels[neg[s][1]] = 1.0
        s += 1
    return labels, s


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("S", [1, 3, 10000])
def test_switch_labels_matches_reference(seed, S):
    rng = np.random.RandomState(seed)
    n = 60
    unlabeled = np.sort(rng.choice(n, 45, replace=False))
    labels = np.where(rng.rand(n) > 0.5, 1.0, -1.0)
    outputs = rng.randn(n) * 1.2
    expected, s_ref = _switch_reference(labels, outputs, unlabeled, S)
    got = labels.copy()
    s = switch_labels(got, outputs, unlabeled, S)
    assert s == s_ref
    np.testing.assert_array_equal(got, expected)
    # Only unlabeled rows change, and the positive count is kept.
    labeled = np.setdiff1d(np.arange(n), unlabeled)
    np.testing.assert_array_equal(got[labeled], labels[labeled])
    assert (got[unlabeled] > 0).sum() == (labels[unlabeled] > 0).sum()


def test_switch_labels_partial_selection_with_ties():
    # Many tied outputs exercise the partial-selection path (k < size / 4).
    unlabeled = np.arange(400)
    labels = np.where(np.arange(400) % 2 == 0, 1.0, -1.0)
    outputs = np.round(np.sin(np.arange(400)), 1)
    for S in (1, 5, 20, 99):
        expected, s_ref = _switch_reference(labels, outputs, unlabeled, S)
        got = labels.copy()
        assert switch_labels(got, outputs, unlabeled, S) == s_ref
        # Tied pairs may be swapped in another order; the multiset of switched
        # outputs and the counts must agree.
        assert sorted(outputs[got != labels]) == sorted(outputs[expected != labels])


@pytest.mark.parametrize(
    "r, u, expected", [(0.5, 1410, 705), (0.5, 5, 3), (0.3, 10, 3), (0.99, 1, 1), (0.4, 1, 0), (0.25, 2, 1)]
)
def test_n_positive_rounds_half_up(r, u, expected):
    assert n_positive(r, u) == expected


def _blobs(seed, n=120, d=30):
    rng = np.random.RandomState(seed)
    y = np.where(rng.rand(n) > 0.5, 1.0, -1.0)
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng)
    X = X + sp.csr_matrix(np.outer(y > 0, np.r_[np.ones(3), np.zeros(d - 3)]) * 0.8)
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(np.flatnonzero(y > 0), 3, replace=False)] = True
    labeled[rng.choice(np.flatnonzero(y < 0), 3, replace=False)] = True
    return as_float64_design(X.tocsr()), y, labeled


@pytest.mark.parametrize("S", [1, 10000])
@pytest.mark.parametrize("r", [0.3, 0.5, 0.71])
def test_positive_count_is_round_r_u_at_every_switch(monkeypatch, S, r):
    X, y, labeled = _blobs(1)
    unl = np.flatnonzero(~labeled)
    target = n_positive(r, unl.size)
    seen = []

    def recording_switch(labels, outputs, unlabeled, max_switches):
        seen.append(int((labels[unlabeled] > 0).sum()))
        n = switch_labels(labels, outputs, unlabeled, max_switches)
        seen.append(int((labels[unlabeled] > 0).sum()))
        return n

    monkeypatch.setattr(_tsvm, "switch_labels", recording_switch)
    res = tsvm(X, y, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=r, max_switches=S)
    assert len(seen) >= 2 and set(seen) == {target}
    assert (res.labels[unl] > 0).sum() == target
    np.testing.assert_array_equal(res.labels[labeled], y[labeled])
    assert res.n_switches >= 0 and res.n_iter >= 2


def test_tsvm_switches_end_when_no_pair_improves():
    X, y, labeled = _blobs(2)
    res = tsvm(X, y, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5)
    labels = res.labels.copy()
    assert switch_labels(labels, res.outputs, np.flatnonzero(~labeled), 10000) == 0
    np.testing.assert_allclose(res.outputs, X @ res.w + res.b, rtol=1e-9, atol=1e-12)


def test_single_switch_visits_more_rounds():
    X, y, labeled = _blobs(3)
    many = tsvm(X, y, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5, max_switches=10000)
    one = tsvm(X, y, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5, max_switches=1)
    # With S = 1 each round switches a single pair, so it needs a solve per switch.
    assert one.n_iter >= one.n_switches
    assert many.n_iter <= one.n_iter


@pytest.mark.parametrize("lam_u", [1e-7, 0.3, 1.0])
def test_final_model_is_the_mfn_optimum_for_its_labels_at_lam_u(lam_u):
    # Also covers lam_u below TSVM_LAMBDA_SMALL, where lam_0 starts at lam_u
    # (SVMlin would stay at 1e-5 > lam_u).
    X, y, labeled = _blobs(4)
    res = tsvm(X, y, labeled, alpha=1e-2, unlabeled_weight=lam_u, positive_fraction=0.5)
    cost = np.where(labeled, 1.0 / labeled.sum(), lam_u / (~labeled).sum())
    ref = l2_svm_mfn(X, res.labels, cost, alpha=1e-2)  # from scratch
    F = mfn_objective(res.w, res.b, res.outputs, res.labels, cost, 1e-2)
    assert F == pytest.approx(ref.objective, rel=1e-7)


@pytest.mark.parametrize("anneal", [True, False])
def test_the_schedule_of_lam_u_with_and_without_annealing(anneal):
    # SVMlin's schedule starts lam_u at TSVM_LAMBDA_SMALL; the safeguard's second TSVM starts at unlabeled_weight.
    X, y, labeled = _blobs(4)
    seen = []

    def record(event):
        if event.stage == "switch":
            seen.append(event.unlabeled_weight)

    res = tsvm(
        X,
        y,
        labeled,
        alpha=1e-2,
        unlabeled_weight=0.7,
        positive_fraction=0.5,
        callback=record,
        anneal_unlabeled_weight=anneal,
    )
    assert seen[0] == (_tsvm.TSVM_LAMBDA_SMALL if anneal else 0.7)
    assert seen[-1] == 0.7
    assert anneal or set(seen) == {0.7}
    cost = np.where(labeled, 1.0 / labeled.sum(), 0.7 / (~labeled).sum())
    ref = l2_svm_mfn(X, res.labels, cost, alpha=1e-2)  # the end point is the optimum for its labels either way
    assert mfn_objective(res.w, res.b, res.outputs, res.labels, cost, 1e-2) == pytest.approx(ref.objective, rel=1e-7)
