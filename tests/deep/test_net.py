"""SemiSupervisedNet and the public deep estimators: contract, determinism, bad input."""

import pickle
import warnings
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.base import clone  # noqa: E402

from skssl.deep import (  # noqa: E402
    AdshClassifier,
    ClassAdaptiveThreshold,
    FixedThreshold,
    FixMatchClassifier,
    FreeMatchClassifier,
    SemiSupervisedNet,
    SmallCNN,
    SupervisedNetClassifier,
)

from ._data import FAST, FAST_IMG, blobs  # noqa: E402

ESTIMATORS = [FixMatchClassifier, FreeMatchClassifier, AdshClassifier, SemiSupervisedNet]


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_fit_predict_contract(Est):
    X, y, y_semi = blobs()
    labels = np.array(["a", "b", "c"], dtype=object)
    y_obj = np.where(y_semi == -1, -1, labels[np.maximum(y_semi, 0)]).astype(object)
    X_before, y_before = X.copy(), y_obj.copy()
    est = Est(random_state=0, **FAST).fit(X, y_obj)
    assert list(est.classes_) == ["a", "b", "c"]
    assert set(est.predict(X)) <= {"a", "b", "c"}
    proba = est.predict_proba(X)
    assert proba.shape == (120, 3) and np.allclose(proba.sum(1), 1, atol=1e-5)
    assert est.transduction_.shape == (120,)
    np.testing.assert_array_equal(est.transduction_[y_semi != -1], y_obj[y_semi != -1])
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(y_obj, y_before)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_determinism_and_clone(Est):
    X, _, y_semi = blobs(seed=1)
    a = Est(random_state=3, **FAST).fit(X, y_semi).predict_proba(X)
    b = clone(Est(random_state=3, **FAST)).fit(X, y_semi).predict_proba(X)
    np.testing.assert_array_equal(a, b)
    c = Est(random_state=4, **FAST).fit(X, y_semi).predict_proba(X)
    assert not np.array_equal(a, c)


def test_global_torch_rng_untouched():
    X, _, y_semi = blobs()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    FixMatchClassifier(random_state=0, **FAST).fit(X, y_semi)
    np.testing.assert_array_equal(torch.rand(3), expected)


def test_history_records_thresholds_mask_rate_and_losses():
    X, _, y_semi = blobs()
    est = FreeMatchClassifier(random_state=0, fairness_weight=0.1, **FAST).fit(X, y_semi)
    batch = est.history[-1, "batches", -1]
    for key in ("loss_x", "loss_u", "mask_rate"):
        assert np.isfinite(batch[key])
    assert len(est.history[:, "thresholds"]) == 2 and len(est.history[-1, "thresholds"]) == 3
    assert 0 <= est.history[-1, "mask_rate"] <= 1
    # the first SAT threshold is 1/C moved by one batch of momentum 0.999
    assert est.history[0, "thresholds"][0] < 0.4
    # fixed iterations per epoch, whatever the number of labeled rows
    assert est.history[:, "train_batch_count"] == [3, 3]


def test_ema_is_not_in_optimizer_and_is_used_for_prediction():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, **FAST).fit(X, y_semi)
    opt_params = {id(p) for g in est.optimizer_.param_groups for p in g["params"]}
    assert not any(id(p) in opt_params for p in est.ema_state_.module.parameters())
    assert {id(p) for p in est.module_.parameters()} == opt_params
    Xt = torch.as_tensor(X[:5], dtype=torch.float32)
    with torch.no_grad():
        ema_proba = torch.softmax(est.ema_state_.module.eval()(Xt), 1).numpy()
        raw_proba = torch.softmax(est.module_.eval()(Xt), 1).numpy()
    np.testing.assert_allclose(est.predict_proba(X[:5]), ema_proba, rtol=1e-5)
    assert not np.allclose(ema_proba, raw_proba)
    no_ema = FixMatchClassifier(random_state=0, ema_momentum=0.0, **FAST).fit(X, y_semi)
    with torch.no_grad():
        raw = torch.softmax(no_ema.module_.eval()(Xt), 1).numpy()
    np.testing.assert_allclose(no_ema.predict_proba(X[:5]), raw, rtol=1e-5)


def test_ema_copies_batchnorm_buffers():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1, 8, 8)).astype(np.float32) * 3 + 1
    y = np.full(60, -1)
    y[:6] = [0, 1, 0, 1, 0, 1]
    est = FixMatchClassifier(random_state=0, **FAST_IMG).fit(X, y)
    for (name, e), b in zip(est.ema_state_.module.named_buffers(), est.module_.buffers()):
        assert torch.equal(e, b), name


def test_unlabeled_batch_larger_than_unlabeled_rows_still_trains():
    X, _, y_semi = blobs(n=30, n_labeled=27)  # 3 unlabeled rows, mu * B = 16
    est = FixMatchClassifier(random_state=0, **FAST).fit(X, y_semi)
    assert np.isfinite(est.history[-1, "batches", -1, "loss_u"])


def test_no_unlabeled_row_warns_and_fits_supervised():
    from skssl.base import NoUnlabeledDataWarning

    X, y, _ = blobs()
    with pytest.warns(NoUnlabeledDataWarning):
        est = FixMatchClassifier(random_state=0, **FAST).fit(X, y)
    assert "loss_u" not in est.history[-1, "batches", -1]


def test_adsh_majority_from_labeled_counts_and_epoch_updates():
    X, _, y_semi = blobs(n=150, n_labeled=15)
    y_semi[(y_semi == 2)] = -1
    y_semi[np.flatnonzero(y_semi == -1)[:2]] = 2  # class 2 has most labeled rows? no: make it so
    y_semi[np.flatnonzero(y_semi == -1)[:10]] = 2
    est = AdshClassifier(random_state=0, **FAST).fit(X, y_semi)
    assert est.masking_.majority_class_ == 2
    assert est.masking_.rho_ is not None


def test_custom_policy_object_is_not_mutated():
    X, _, y_semi = blobs()
    policy = FixedThreshold(0.7)
    est = SemiSupervisedNet(masking=policy, random_state=0, **FAST).fit(X, y_semi)
    assert not hasattr(policy, "n_classes_")
    assert est.masking_.threshold == 0.7


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_mu_must_be_positive(bad):
    X, _, y_semi = blobs()
    with pytest.raises(ValueError, match="mu"):
        FixMatchClassifier(**{**FAST, "mu": bad}).fit(X, y_semi)


@pytest.mark.parametrize(
    "Est, Policy", [(FixMatchClassifier, FixedThreshold), (AdshClassifier, ClassAdaptiveThreshold)]
)
@pytest.mark.parametrize("bad", [0.0, 1.01, -0.5])
def test_thresholds_outside_unit_interval(Est, Policy, bad):
    X, _, y_semi = blobs()
    with pytest.raises(ValueError, match="'threshold' parameter of " + Policy.__name__):
        Est(masking=Policy(bad), **FAST).fit(X, y_semi)
    # the same through nested set_params on the default policy
    with pytest.raises(ValueError, match="'threshold' parameter of " + Policy.__name__):
        Est(**FAST).set_params(masking__threshold=bad).fit(X, y_semi)


def test_three_d_X_raises():
    with pytest.raises(ValueError, match="2-D .* or 4-D"):
        FixMatchClassifier(**FAST).fit(np.zeros((10, 3, 3)), np.array([0, 1] + [-1] * 8))


@pytest.mark.parametrize("X", [np.array([["a", "b"]] * 10, dtype=object), np.ones((10, 2), dtype=complex)])
def test_dtype_torch_cannot_take(X):
    with pytest.raises(ValueError):
        FixMatchClassifier(**FAST).fit(X, np.array([0, 1] + [-1] * 8))


def test_wrong_channel_count_names_shapes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 1, 8, 8)).astype(np.float32)
    y = np.array([0, 1] * 3 + [-1] * 14)
    est = FixMatchClassifier(random_state=0, **FAST_IMG).fit(X, y)
    with pytest.raises(ValueError, match=r"\(3, 8, 8\).*\(1, 8, 8\)"):
        est.predict(np.zeros((2, 3, 8, 8), dtype=np.float32))
    # a user module expecting 3 channels, fitted on 1-channel images
    est = FixMatchClassifier(
        module=SmallCNN, module__in_channels=3, module__n_classes=2, max_epochs=1, iterations_per_epoch=1, batch_size=4
    )
    with pytest.raises(ValueError, match=r"shape \(1, 8, 8\)"):
        est.fit(X, y)


def test_module_returning_wrong_width_raises():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(
        module=torch.nn.Linear,
        module__in_features=2,
        module__out_features=5,
        **{k: v for k, v in FAST.items() if not k.startswith("module__")},
    )
    with pytest.raises(ValueError, match="logits of shape"):
        est.fit(X, y_semi)


def test_pickle_roundtrip_predicts_the_same():
    X, _, y_semi = blobs()
    est = FreeMatchClassifier(random_state=0, **FAST).fit(X, y_semi)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


def test_get_params_has_no_private_or_fitted_attributes():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, **FAST).fit(X, y_semi)
    names = set(est.get_params(deep=False))
    assert not any(n.startswith("_") or n.endswith("_") for n in names)
    assert {"masking", "mu", "unlabeled_weight", "ema_momentum", "module__hidden_units", "random_state"} <= names


def test_partial_fit_continues_training():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, **FAST).partial_fit(X, y_semi)
    est.partial_fit(X, y_semi)
    assert len(est.history) == 4
    with pytest.raises(ValueError, match="not seen"):
        est.partial_fit(X, np.where(y_semi == 0, 7, y_semi))


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["flat", "one_class", "huge"]))
def test_no_nan_in_training(seed, kind):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 3))
    y = np.full(40, -1)
    y[:4] = [0, 1, 2, 0]
    if kind == "flat":
        X[:] = 0.0  # every prediction uniform: no row passes the mask
    elif kind == "one_class":
        X[4:] = X[0]  # all unlabeled rows copy one labeled row: one class in every batch
    else:
        X *= 1e4
    for Est in (FixMatchClassifier, FreeMatchClassifier, AdshClassifier):
        est = Est(random_state=seed, **{**FAST, "max_epochs": 2, "iterations_per_epoch": 2})
        est.fit(X, y)
        for epoch in est.history:
            for b in epoch["batches"]:
                assert all(np.isfinite(v) for k, v in b.items() if k.startswith(("loss", "train_loss")))
        assert np.all(np.isfinite(est.predict_proba(X)))


class TestSupervisedNet:
    def test_labels_proba_and_clone(self):
        X, y, _ = blobs()
        y_str = np.array(["x", "y", "z"])[y]
        est = SupervisedNetClassifier(max_epochs=3, random_state=0)
        a = est.fit(X, y_str).predict_proba(X)
        b = clone(est).fit(X, y_str).predict_proba(X)
        np.testing.assert_array_equal(a, b)
        assert set(est.predict(X)) <= {"x", "y", "z"}

    def test_sample_weight_changes_the_fit_and_ones_equal_none(self):
        X, y, _ = blobs()
        base = SupervisedNetClassifier(max_epochs=3, random_state=0)
        p_none = clone(base).fit(X, y).predict_proba(X)
        p_ones = clone(base).fit(X, y, sample_weight=np.ones(len(y))).predict_proba(X)
        np.testing.assert_array_equal(p_none, p_ones)
        w = np.where(y == 0, 5.0, 0.1)
        assert not np.allclose(clone(base).fit(X, y, sample_weight=w).predict_proba(X), p_none)
        with pytest.raises(ValueError, match="zero"):
            clone(base).fit(X, y, sample_weight=np.zeros(len(y)))

    def test_one_class_raises(self):
        with pytest.raises(ValueError, match="one class"):
            SupervisedNetClassifier().fit(np.zeros((5, 2)), np.zeros(5))

    def test_images_use_the_cnn(self):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(16, 2, 6, 6))
        est = SupervisedNetClassifier(max_epochs=1, random_state=0, augment="weak").fit(X, np.arange(16) % 2)
        assert isinstance(est.module_, SmallCNN)
        assert est.predict(X).shape == (16,)


def test_verbose_log_prints_thresholds_and_mask_rate(capsys):
    X, _, y_semi = blobs()
    FixMatchClassifier(random_state=0, verbose=1, **FAST).fit(X, y_semi)
    out = capsys.readouterr().out
    assert "mask_rate" in out and "train_loss" in out


def test_callbacks_and_module_params_are_routed():
    from skorch.callbacks import Callback

    class Count(Callback):
        def initialize(self):
            self.n = 0
            return self

        def on_batch_end(self, net, **kwargs):
            self.n += 1

    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, **FAST)
    est.set_params(callbacks=[("count", Count())], module__hidden_units=(8, 8))
    est.fit(X, y_semi)
    assert dict(est.callbacks_)["count"].n == 2 * 3
    assert est.module_.net[0].out_features == 8


def test_train_split_validates_on_labeled_rows_only():
    from skorch.dataset import ValidSplit

    X, _, y_semi = blobs(n=150, n_labeled=30)
    est = FixMatchClassifier(random_state=0, train_split=ValidSplit(5, stratified=True), **FAST)
    est.fit(X, y_semi)
    valid_rows = sum(b["valid_batch_size"] for b in est.history[-1, "batches"] if "valid_batch_size" in b)
    assert valid_rows == 6  # a fifth of the 30 labeled rows, none of the unlabeled ones
    assert np.isfinite(est.history[-1, "valid_loss"])
    assert 0 <= est.history[-1, "valid_acc"] <= 1
    sup = SupervisedNetClassifier(max_epochs=2, random_state=0, train_split=ValidSplit(5))
    sup.fit(X, blobs(150)[1])
    assert np.isfinite(sup.history[-1, "valid_loss"])


@pytest.mark.parametrize("Est", [FixMatchClassifier, FreeMatchClassifier, AdshClassifier])
def test_sample_weight_weights_the_labeled_loss(Est):
    X, _, y_semi = blobs()
    base = Est(random_state=0, **FAST)
    p_none = clone(base).fit(X, y_semi).predict_proba(X)
    p_ones = clone(base).fit(X, y_semi, sample_weight=np.ones(len(y_semi))).predict_proba(X)
    np.testing.assert_array_equal(p_none, p_ones)
    w = np.where(y_semi == 0, 5.0, 0.1)
    assert not np.allclose(clone(base).fit(X, y_semi, sample_weight=w).predict_proba(X), p_none)
    # only the labeled rows' weights matter
    w_unl = np.where(y_semi == -1, 7.0, 1.0)
    np.testing.assert_array_equal(clone(base).fit(X, y_semi, sample_weight=w_unl).predict_proba(X), p_none)
    with pytest.raises(ValueError, match="zero for every labeled row"):
        clone(base).fit(X, y_semi, sample_weight=np.where(y_semi == -1, 1.0, 0.0))
    with pytest.raises(ValueError, match="sample_weight"):
        clone(base).fit(X, y_semi, sample_weight=-np.ones(len(y_semi)))


def test_sample_weight_with_an_averaging_criterion_raises_by_name():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(criterion__reduction="mean", random_state=0, **FAST)
    est.fit(X, y_semi)  # fine without weights
    with pytest.raises(ValueError, match="sample_weight needs per-row losses"):
        clone(est).fit(X, y_semi, sample_weight=np.ones(len(y_semi)))


def test_verbose_line_is_compact(capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.full(200, -1)
    y[:20] = np.arange(20) % 10  # ten classes: the full threshold vector would be ~100 characters
    FreeMatchClassifier(random_state=0, verbose=1, **FAST).fit(X, y)
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)  # skorch colours the best loss
    lines = [line for line in out.splitlines() if line.strip()]
    header = lines[0].split()
    assert header[:2] == ["epoch", "mask_rate"] and {"thr_min", "thr_mean", "thr_max", "train_loss"} <= set(header)
    assert "thresholds" not in header
    assert max(len(line) for line in lines) <= 80


FAST_NO_MODULE = {k: v for k, v in FAST.items() if not k.startswith("module__")}


def _fast_for(Est):
    """FAST without the MLP's sizes (and without ``mu`` for the supervised net)."""
    return {k: v for k, v in FAST_NO_MODULE.items() if Est is not SupervisedNetClassifier or k != "mu"}


@pytest.mark.parametrize("Est", [*ESTIMATORS, SupervisedNetClassifier])
def test_module_instance_is_used_as_given(Est):
    # the skorch idiom module=<instance>; skorch's rule: trained in place, copied by clone
    X, _, y_semi = blobs()
    module = torch.nn.Linear(2, 3)
    est = Est(module=module, random_state=0, **_fast_for(Est))
    assert est.get_params()["module"] is module
    est.fit(X, y_semi)
    assert est.module_ is module
    assert est.predict(X).shape == (X.shape[0],)
    twin = clone(est)
    assert isinstance(twin.module, torch.nn.Linear) and twin.module is not module
    assert twin.fit(X, y_semi).predict(X).shape == (X.shape[0],)
    # a refit continues from the instance's weights; set_params takes another instance
    before = module.weight.detach().clone()
    est.fit(X, y_semi)
    assert est.module_ is module and not torch.equal(before, module.weight)
    other = torch.nn.Linear(2, 3)
    assert est.set_params(module=other).fit(X, y_semi).module_ is other
    assert Est(**_fast_for(Est)).set_params(module=torch.nn.Linear(2, 3)).module.out_features == 3


def test_module_instance_with_module_params_builds_a_new_one():
    X, _, y_semi = blobs()
    module = torch.nn.Linear(2, 3)
    est = FixMatchClassifier(module=module, module__in_features=2, module__out_features=3, **FAST_NO_MODULE)
    est.fit(X, y_semi)
    assert isinstance(est.module_, torch.nn.Linear) and est.module_ is not module


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", torch.device("cuda")])
def test_cuda_device_without_cuda_says_so(device):
    X, _, y_semi = blobs()
    with pytest.raises(ValueError, match=r"CUDA is not available.*device='cpu'"):
        FixMatchClassifier(device=device, **FAST).fit(X, y_semi)
    with pytest.raises(ValueError, match="CUDA is not available"):
        SupervisedNetClassifier(device=device, max_epochs=1).fit(X, y_semi)


def test_dataframe_input_gives_no_warning():
    pd = pytest.importorskip("pandas")
    X, _, y_semi = blobs()
    df = pd.DataFrame(X, columns=["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for Est in (FixMatchClassifier, SupervisedNetClassifier):
            est = Est(random_state=0, **_fast_for(Est))
            est.fit(df, y_semi, sample_weight=pd.Series(np.ones(len(y_semi))))
            est.predict(df)
            est.partial_fit(df, y_semi)
    assert np.array_equal(df.to_numpy(), X)  # the caller's data is untouched


def test_verbose_line_shows_epoch_total_and_time_left_without_colour(capsys):
    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, verbose=1, **{**FAST, "max_epochs": 3}).fit(X, y_semi)
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # pytest's captured stdout is not a terminal
    lines = [line.split() for line in out.splitlines() if line.strip()]
    assert lines[0][0] == "epoch" and lines[0][-2:] == ["dur", "left"]
    assert [row[0] for row in lines[2:]] == ["1/3", "2/3", "3/3"]
    assert all(re.fullmatch(r"\d+s|\d+m\d\ds|\d+h\d\dm", row[-1]) for row in lines[2:])
    est.partial_fit(X, y_semi)  # partial_fit continues skorch's epoch count
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert rows == ["4/6", "5/6", "6/6"]
