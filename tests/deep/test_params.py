"""Parameters: merged signatures, clone, nested policy parameters, repr, search, validation."""

import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

from skssl.deep import (  # noqa: E402
    AdshClassifier,
    ClassAdaptiveThreshold,
    FixedThreshold,
    FixMatchClassifier,
    FreeMatchClassifier,
    GaussianNoise,
    RandAugment,
    RandomShift,
    SelfAdaptiveThreshold,
    SemiSupervisedNet,
    SupervisedNetClassifier,
)
from skssl.model_selection import SemiSupervisedKFold  # noqa: E402

from ._data import FAST, blobs  # noqa: E402

NETS = [FixMatchClassifier, FreeMatchClassifier, AdshClassifier, SemiSupervisedNet, SupervisedNetClassifier]


@pytest.mark.parametrize("Net", NETS)
def test_signature_defaults_are_the_instance_values(Net):
    est = Net()
    params = inspect.signature(Net).parameters
    for name, p in params.items():
        if p.kind is p.VAR_KEYWORD:
            continue
        assert getattr(est, name) is p.default or getattr(est, name) == p.default, name
    assert set(est.get_params(deep=False)) == {n for n, p in params.items() if p.kind is not p.VAR_KEYWORD}


def test_subclasses_set_only_their_defaults():
    assert FreeMatchClassifier().fairness_weight == 0.01
    assert AdshClassifier().mu == 2 and FixMatchClassifier().mu == 3
    assert SupervisedNetClassifier().max_epochs == 30 and FixMatchClassifier().max_epochs == 40
    # no copied __init__: FixMatch is the core with its default policy
    assert "__init__" not in vars(FixMatchClassifier)
    assert isinstance(FixMatchClassifier._default_masking(), FixedThreshold)


def test_clone_round_trips_a_policy_and_lists_its_parameters():
    est = FixMatchClassifier(masking=FixedThreshold(0.9))
    params = est.get_params(deep=True)
    assert params["masking__threshold"] == 0.9
    again = clone(est)
    assert again.masking is not est.masking and again.masking.threshold == 0.9
    assert again.get_params(deep=True)["masking__threshold"] == 0.9


def test_nested_set_params_on_the_default_policy():
    est = FreeMatchClassifier().set_params(masking__momentum=0.9, masking__saf_sign=1)
    assert isinstance(est.masking, SelfAdaptiveThreshold)
    assert est.masking.get_params() == {"momentum": 0.9, "saf_sign": 1}
    est = AdshClassifier().set_params(masking__threshold=0.8)
    assert isinstance(est.masking, ClassAdaptiveThreshold) and est.masking.threshold == 0.8
    with pytest.raises(ValueError, match="weak_augment is None"):
        FixMatchClassifier().set_params(weak_augment__noise=0.1)
    est = FixMatchClassifier(strong_augment=GaussianNoise()).set_params(strong_augment__noise=0.4)
    assert est.strong_augment.noise == 0.4


def test_fitted_policy_is_a_clone_with_state_in_trailing_underscore_attributes():
    X, _, y_semi = blobs()
    policy = SelfAdaptiveThreshold(momentum=0.9)
    est = FreeMatchClassifier(masking=policy, random_state=0, **FAST).fit(X, y_semi)
    assert est.masking_ is not policy and not hasattr(policy, "thresholds_")
    assert est.masking_.momentum == 0.9
    np.testing.assert_allclose(est.masking_.thresholds_, est.history[-1, "thresholds"])
    assert est.masking_.p_tilde_.shape == (3,) and isinstance(est.masking_.tau_, float)


@pytest.mark.parametrize("obj", [FixedThreshold(0.8), SelfAdaptiveThreshold(0.9), ClassAdaptiveThreshold(0.7)])
def test_policies_are_parameter_objects(obj):
    assert "object at 0x" not in repr(obj)
    again = clone(obj)
    assert again.get_params() == obj.get_params()


@pytest.mark.parametrize("obj", [GaussianNoise(0.2, 0.1), RandomShift(pad=2, flip=True), RandAugment(n_ops=1)])
def test_augmentations_are_parameter_objects(obj):
    assert repr(obj).startswith(type(obj).__name__ + "(") and "object at 0x" not in repr(obj)
    assert clone(obj).get_params() == obj.get_params()


def test_repr_shows_only_what_the_user_changed():
    assert repr(FixMatchClassifier()) == "FixMatchClassifier()"
    assert repr(FreeMatchClassifier(max_epochs=5)) == "FreeMatchClassifier(max_epochs=5)"
    text = repr(AdshClassifier(masking=ClassAdaptiveThreshold(0.9), module__hidden_units=64))
    assert "masking=ClassAdaptiveThreshold(threshold=0.9)" in text and "module__hidden_units=64" in text
    assert "mu=" not in text  # Adsh's own default mu=2 is not a change


def test_hidden_units_accepts_an_int_like_mlpclassifier():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, **{**FAST, "module__hidden_units": 8}).fit(X, y_semi)
    assert est.module_.net[0].out_features == 8 and len(est.module_.net) == 3


def test_grid_search_over_a_policy_parameter_with_semi_supervised_kfold():
    X, _, y_semi = blobs(n=150, n_labeled=18)
    search = GridSearchCV(
        FixMatchClassifier(random_state=0, **FAST),
        {"masking__threshold": [0.5, 0.99]},
        cv=SemiSupervisedKFold(3),
    )
    search.fit(X, y_semi)
    assert list(search.cv_results_["param_masking__threshold"]) == [0.5, 0.99]
    best = search.best_estimator_
    assert best.masking.threshold == search.best_params_["masking__threshold"]
    assert best.masking_.threshold == best.masking.threshold
    # the two candidates really trained differently: a lower threshold keeps more rows
    low = clone(search.estimator).set_params(masking__threshold=0.5).fit(X, y_semi)
    high = clone(search.estimator).set_params(masking__threshold=0.99).fit(X, y_semi)
    assert low.history[-1, "mask_rate"] > high.history[-1, "mask_rate"]


def test_grid_search_over_the_freematch_momentum():
    X, _, y_semi = blobs(n=150, n_labeled=18)
    search = GridSearchCV(
        FreeMatchClassifier(random_state=0, **FAST), {"masking__momentum": [0.5, 0.999]}, cv=SemiSupervisedKFold(2)
    ).fit(X, y_semi)
    assert search.best_estimator_.masking_.momentum in (0.5, 0.999)


@pytest.mark.parametrize(
    "param, bad",
    [
        ("mu", 0),
        ("unlabeled_weight", -1.0),
        ("ema_momentum", 1.0),
        ("max_epochs", 0),
        ("batch_size", 0),
        ("iterations_per_epoch", 0),
        ("lr", 0.0),
        ("masking", "fixed"),
    ],
)
def test_bad_values_name_the_parameter(param, bad):
    X, _, y_semi = blobs()
    with pytest.raises(ValueError, match=f"'{param}' parameter of FixMatchClassifier"):
        FixMatchClassifier(**{**FAST, param: bad}).fit(X, y_semi)


def test_routed_skorch_parameters_pass_the_sklearn_validation():
    X, _, y_semi = blobs()
    est = FixMatchClassifier(random_state=0, optimizer__weight_decay=1e-4, **FAST).fit(X, y_semi)
    assert est.optimizer_.param_groups[0]["weight_decay"] == 1e-4
    with pytest.raises(ValueError, match="unexpected argument"):
        FixMatchClassifier(**FAST, modul__x=1).fit(X, y_semi)


def test_hidden_units_int_or_tuple_in_a_search():
    X, _, y_semi = blobs(n=150, n_labeled=18)
    params = {k: v for k, v in FAST.items() if k != "module__hidden_units"}
    search = GridSearchCV(
        FixMatchClassifier(random_state=0, **params),
        {"module__hidden_units": [8, (8, 8)]},
        cv=SemiSupervisedKFold(2),
        error_score="raise",
    ).fit(X, y_semi)
    assert list(search.cv_results_["param_module__hidden_units"]) == [8, (8, 8)]


@pytest.mark.parametrize("Net", NETS)
def test_silent_by_default(Net, capsys):
    X, y, y_semi = blobs()
    params = dict(FAST)
    if Net is SupervisedNetClassifier:
        params.pop("mu")  # no unlabeled batch
    Net(random_state=0, **params).fit(X, y_semi)
    assert capsys.readouterr().out == ""
