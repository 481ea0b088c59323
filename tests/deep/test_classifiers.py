"""The public semi-supervised nets: FreeMatch's fairness term is its own parameter and loss."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone  # noqa: E402

from skssl.deep import (  # noqa: E402
    AdshClassifier,
    FixedThreshold,
    FixMatchClassifier,
    FreeMatchClassifier,
    SelfAdaptiveThreshold,
    SemiSupervisedNet,
)

from ._data import FAST, blobs  # noqa: E402


def _weights(net):
    return list(net.module_.state_dict().values())


def _same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(_weights(a), _weights(b), strict=True))


def _batches(net):
    return [b for epoch in net.history for b in epoch["batches"]]


@pytest.mark.parametrize("Net", [SemiSupervisedNet, FixMatchClassifier, AdshClassifier])
def test_fairness_weight_belongs_to_freematch_only(Net):
    assert "fairness_weight" not in Net().get_params()
    assert FreeMatchClassifier().get_params()["fairness_weight"] == 0.01
    X, _, y_semi = blobs()
    with pytest.raises(ValueError, match="unexpected argument.*fairness_weight"):
        Net(fairness_weight=0.1, **FAST).fit(X, y_semi)


def test_fairness_weight_is_validated():
    X, _, y_semi = blobs()
    with pytest.raises(ValueError, match="'fairness_weight' parameter of FreeMatchClassifier"):
        FreeMatchClassifier(fairness_weight=-0.1, **FAST).fit(X, y_semi)


def test_fairness_weight_survives_clone_set_params_and_pickle():
    est = FreeMatchClassifier(fairness_weight=0.2)
    assert clone(est).fairness_weight == 0.2
    assert repr(est) == "FreeMatchClassifier(fairness_weight=0.2)"
    assert est.set_params(fairness_weight=0.3).fairness_weight == 0.3
    X, _, y_semi = blobs()
    est.set_params(random_state=0, **FAST).fit(X, y_semi)
    again = pickle.loads(pickle.dumps(est))
    assert again.fairness_weight == 0.3
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


def test_freematch_adds_the_weighted_fairness_loss_to_the_core_loss():
    X, _, y_semi = blobs()
    kw = dict(unlabeled_weight=0.5, random_state=0, **FAST)
    est = FreeMatchClassifier(fairness_weight=0.1, **kw).fit(X, y_semi)
    batches = _batches(est)
    assert all(np.isfinite(b["loss_f"]) for b in batches)
    for b in batches:
        lx, lu, lf = (torch.tensor(b[k], dtype=torch.float32) for k in ("loss_x", "loss_u", "loss_f"))
        # the fairness term is not scaled by unlabeled_weight
        assert b["train_loss"] == (lx + (0.5 * lu + 0.1 * lf)).item()
    core = SemiSupervisedNet(masking=SelfAdaptiveThreshold(), **kw).fit(X, y_semi)
    assert not _same_weights(est, core)
    # without its fairness term FreeMatch is the core with its policy, bit for bit
    off = FreeMatchClassifier(fairness_weight=0.0, **kw).fit(X, y_semi)
    assert _same_weights(off, core)
    assert not any("loss_f" in b for b in _batches(off))


def test_a_policy_without_a_fairness_loss_trains_without_it():
    X, _, y_semi = blobs()
    kw = dict(masking=FixedThreshold(0.5), random_state=0, **FAST)
    est = FreeMatchClassifier(fairness_weight=0.5, **kw).fit(X, y_semi)
    assert not any("loss_f" in b for b in _batches(est))
    assert _same_weights(est, FixMatchClassifier(**kw).fit(X, y_semi))
