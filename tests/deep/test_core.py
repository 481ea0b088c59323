"""SemiSupervisedNet's unlabeled_loss hook: the one method a new semi-supervised loss overrides."""

from pathlib import Path
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone  # noqa: E402

from skssl.deep import FixedThreshold, FreeMatchClassifier, SemiSupervisedNet  # noqa: E402
from skssl.deep._losses import masked_cross_entropy  # noqa: E402

from ._data import FAST, blobs  # noqa: E402

USER_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "deep.rst"


def _params(net):
    return {k: v.clone() for k, v in net.module_.state_dict().items()}


def _assert_same_weights(a, b):
    pa, pb = _params(a), _params(b)
    assert pa.keys() == pb.keys()
    assert all(torch.equal(pa[k], pb[k]) for k in pa)


class NoUnlabeledLoss(SemiSupervisedNet):
    """A loss that adds nothing: the net trains on its labeled rows only."""

    def unlabeled_loss(self, logits_strong, probs_weak, mask, pseudo_labels):
        self.history.record_batch("hook_rows", int(logits_strong.shape[0]))
        return 0 * logits_strong.sum()


class RecordingNet(SemiSupervisedNet):
    """The core's loss, with the arguments and results of every call kept for inspection."""

    def unlabeled_loss(self, logits_strong, probs_weak, mask, pseudo_labels):
        loss = super().unlabeled_loss(logits_strong, probs_weak, mask, pseudo_labels)
        self.calls_.append((logits_strong.detach().clone(), probs_weak, mask, pseudo_labels, loss.detach().clone()))
        self.grad_paths_.append(logits_strong.requires_grad and loss.requires_grad)
        return loss

    def _start_fit(self, X, y_enc, mask, reset, seed):
        self.calls_, self.grad_paths_ = [], []
        super()._start_fit(X, y_enc, mask, reset, seed)


def test_a_new_loss_is_one_method():
    X, _, y_semi = blobs()
    kw = dict(masking=FixedThreshold(0.05), random_state=0, **FAST)
    plain = SemiSupervisedNet(**kw).fit(X, y_semi)
    none = NoUnlabeledLoss(**kw).fit(X, y_semi)
    # a zero unlabeled loss trains exactly like unlabeled_weight=0 and unlike the default loss
    _assert_same_weights(none, SemiSupervisedNet(unlabeled_weight=0.0, **kw).fit(X, y_semi))
    assert any(not torch.equal(a, b) for a, b in zip(_params(none).values(), _params(plain).values()))
    # the core still records its own entries; the override's replace loss_u
    steps = FAST["max_epochs"] * FAST["iterations_per_epoch"]
    batches = [b for epoch in none.history for b in epoch["batches"]]
    assert len(batches) == steps
    assert all("loss_x" in b and "mask_rate" in b and "loss_u" not in b for b in batches)
    assert [b["hook_rows"] for b in batches] == [FAST["mu"] * FAST["batch_size"]] * steps
    assert all(b["mask_rate"] == 1.0 for b in batches)


def test_the_default_loss_is_the_weighted_masked_cross_entropy_of_the_strong_view():
    X, _, y_semi = blobs()
    kw = dict(masking=FixedThreshold(0.5), unlabeled_weight=0.5, random_state=0, **FAST)
    net = RecordingNet(**kw).fit(X, y_semi)
    steps = FAST["max_epochs"] * FAST["iterations_per_epoch"]
    assert len(net.calls_) == steps and all(net.grad_paths_)
    n_u, n_classes = FAST["mu"] * FAST["batch_size"], 3
    loss_u = [b["loss_u"] for epoch in net.history for b in epoch["batches"]]
    for (logits, probs, mask, pseudo, loss), recorded in zip(net.calls_, loss_u):
        assert logits.shape == probs.shape == (n_u, n_classes)
        assert not probs.requires_grad and torch.allclose(probs.sum(1), torch.ones(n_u))
        assert mask.dtype == torch.bool and mask.shape == (n_u,)
        np.testing.assert_array_equal(mask, probs.max(1).values >= 0.5)
        np.testing.assert_array_equal(pseudo, probs.argmax(1))
        unweighted = masked_cross_entropy(logits, pseudo, mask)
        assert recorded == unweighted.item()
        assert torch.equal(loss, 0.5 * unweighted)
    assert any(m.any() for _, _, m, _, _ in net.calls_) and not all(m.all() for _, _, m, _, _ in net.calls_)
    # an override that only calls the core's trains the same net, bit for bit
    _assert_same_weights(net, SemiSupervisedNet(**kw).fit(X, y_semi))


def test_the_step_loss_is_the_labeled_loss_plus_the_hook():
    X, _, y_semi = blobs()
    net = RecordingNet(masking=FixedThreshold(0.5), unlabeled_weight=2.0, random_state=1, **FAST).fit(X, y_semi)
    batches = [b for epoch in net.history for b in epoch["batches"]]
    for b, call in zip(batches, net.calls_):
        expected = torch.tensor(b["loss_x"], dtype=torch.float32) + call[-1]
        assert b["train_loss"] == expected.item()


def test_the_hook_is_not_called_without_unlabeled_rows():
    class Refuses(SemiSupervisedNet):
        def unlabeled_loss(self, logits_strong, probs_weak, mask, pseudo_labels):
            raise AssertionError("called without unlabeled rows")

    X, y, _ = blobs()
    net = Refuses(random_state=0, **FAST).fit(X, y)
    assert "loss_u" not in net.history[-1, "batches", -1]
    with pytest.raises(AssertionError, match="called without"):
        Refuses(random_state=0, **FAST).fit(X, np.where(np.arange(len(y)) < 30, y, -1))


def test_an_override_inherits_the_documentation():
    assert NoUnlabeledLoss.unlabeled_loss.__doc__ == SemiSupervisedNet.unlabeled_loss.__doc__
    assert "Parameters" in SemiSupervisedNet.unlabeled_loss.__doc__


def _user_guide_loss():
    if not USER_GUIDE.exists():
        pytest.skip("the user guide is not next to the tests")
    text = USER_GUIDE.read_text(encoding="utf-8")
    section = text[text.index("Writing a new unlabeled loss") :]
    code = re.search(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", section).group(1)
    namespace = {}
    exec(compile("\n".join(line[3:] for line in code.splitlines()), str(USER_GUIDE), "exec"), namespace)
    return namespace["SoftWeightedNet"]


def test_the_user_guide_example_trains_with_its_own_loss_and_records():
    SoftWeightedNet = _user_guide_loss()
    X, _, y_semi = blobs()
    soft = SoftWeightedNet(random_state=0, **FAST).fit(X, y_semi)
    batches = [b for epoch in soft.history for b in epoch["batches"]]
    assert all(0 < b["mean_weight"] <= 1 and np.isfinite(b["loss_u"]) for b in batches)
    assert any(b["mean_weight"] < 1 for b in batches)
    fixmatch = SemiSupervisedNet(random_state=0, **FAST).fit(X, y_semi)
    assert any(not torch.equal(a, b) for a, b in zip(_params(soft).values(), _params(fixmatch).values()))
    # the core's machinery comes with it: clone and the same net again
    again = clone(SoftWeightedNet(random_state=0, **FAST)).fit(X, y_semi)
    np.testing.assert_array_equal(again.predict_proba(X), soft.predict_proba(X))


def test_user_guide_shows_the_progress_line_the_nets_print(capsys):
    # the guide's "Watching a fit" output is a captured one: its header is the line a net prints
    X, _, y_semi = blobs()
    FreeMatchClassifier(verbose=1, random_state=0, **FAST).fit(X, y_semi)
    header = capsys.readouterr().out.splitlines()[0]
    guide = [line.strip() for line in USER_GUIDE.read_text().splitlines()]
    assert header.strip() in guide
    assert re.search(r"^1/3 .* \d+s$", "\n".join(guide), flags=re.MULTILINE)
