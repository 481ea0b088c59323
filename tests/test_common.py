"""sklearn's and skssl's estimator checks on every public skssl estimator.

Estimators are discovered by walking the public ``skssl`` subpackages, so a
new estimator is checked the moment it is exported. The deep family is
checked only when torch and skorch are installed.
"""

import importlib
import inspect
import pkgutil

import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

import skssl
from skssl.svm import TransductiveSVC
from skssl.utils.estimator_checks import parametrize_with_semi_supervised_checks

from ._toy_estimator import SeededCentroidClassifier

# Keyword arguments for the checked instances: fewer epochs for the deep nets
# (fast enough for ~50 sklearn checks without changing the code paths), a
# plain sklearn classifier inside the meta-estimators, whose default inner
# model needs torch (the default itself is checked in tests/self_training),
# and no safeguard for the semi-supervised SVMs, whose default one refits each
# model on held-out labels and makes every check's fit 5 to 8 times longer.
# The SVMs' defaults go through both sets of checks too, in the slow tests at
# the end of this module.
_FAST_NET = {"max_epochs": 2, "iterations_per_epoch": 10}
_NO_SAFEGUARD = {"safeguard": None}
FAST_PARAMS = {
    "TransductiveSVC": _NO_SAFEGUARD,
    "DeterministicAnnealingSVC": _NO_SAFEGUARD,
    "PottsDeterministicAnnealingSVC": _NO_SAFEGUARD,
    "CurriculumLabelingClassifier": {"estimator": LogisticRegression()},
    "LabeledOnlyClassifier": {"estimator": LogisticRegression()},
    # Without the internal cross-validations of the safeguard and of alpha's check: one solve per fold (the
    # default is tested in tests/test_calibration.py).
    "SemiSupervisedCalibratedClassifierCV": {"estimator": TransductiveSVC(alpha=1e-2, safeguard=None), "cv": 3},
    "FixMatchClassifier": _FAST_NET,
    "FreeMatchClassifier": _FAST_NET,
    "AdshClassifier": _FAST_NET,
    "SemiSupervisedNet": _FAST_NET,
    "SupervisedNetClassifier": {"max_epochs": 5},
}

#: Why a check is expected to fail, for every estimator.
COMMON_EXPECTED_FAILURES = {
    "check_classifiers_classes": (
        "fits the labels [-1, 1]; -1 marks unlabeled rows in skssl (sklearn "
        "special-cases its own semi-supervised estimators by class name)"
    ),
}

# Every net weights its labeled loss by sample_weight (tests/deep), so sklearn runs this check on them.
# (check_methods_subset_invariance used to be expected to fail here, with float32 probabilities differing by
# about 2e-7 between batch sizes; it passed in every run on this machine since, with torch's default threads
# and with the nets' n_jobs=1, so it is checked again.)
_NET_EXPECTED = {
    "check_sample_weight_equivalence_on_dense_data": (
        "minibatch SGD: duplicating rows changes the batches, so a weight of 2 "
        "is not identical to a repeated row (weights of ones equal no weights; tested)"
    ),
}

_MINUS_ONE_CLASS = {
    "check_class_weight_balanced_linear_classifier": (
        "fits the labels [1, -1]; -1 marks unlabeled rows in skssl, so only one class is labeled "
        "(class_weight='balanced' is tested in tests/svm/test_sample_weight.py and test_potts_weights.py)"
    ),
}

_LINEAR_EXPECTED = {
    **_MINUS_ONE_CLASS,
    "check_sample_weight_equivalence_on_dense_data": (
        "a weight of 2 and a repeated row agree to the solver's CGLS tolerance (outputs within 3e-7 relative at "
        "the check's alpha_ of about 0.01; the check asks 1e-7); weights against repeated rows are tested in "
        "tests/svm/test_sample_weight.py and test_potts.py"
    ),
    "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    "check_class_weight_classifiers": (
        "the labeled costs are normalized to sum to 1 (SVMlin's objective), so class_weight={0: 1000, 1: 1e-4} "
        "reweighs the classes without lowering the regularization as a larger C would; on the check's "
        "overlapping blobs, at alpha='auto', 74% of the test rows are predicted class 0 (the check asks 87%). "
        "class_weight is tested in tests/svm/test_sample_weight.py and test_potts.py"
    ),
}

_CALIBRATION_EXPECTED = {
    "check_sample_weight_equivalence_on_dense_data": (
        "a repeated row changes the folds over the labeled rows, so a weight of 2 is not a repeated row (as for "
        "sklearn's CalibratedClassifierCV, which sklearn expects to fail it); weights are tested in "
        "tests/test_calibration.py"
    ),
    "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
}

#: Extra expected failures per estimator class name, each with its reason.
EXPECTED_FAILURES = {
    "SemiSupervisedCalibratedClassifierCV": _CALIBRATION_EXPECTED,
    "LinearL2SVC": _LINEAR_EXPECTED,
    "TransductiveSVC": _LINEAR_EXPECTED,
    "DeterministicAnnealingSVC": _LINEAR_EXPECTED,
    "PottsDeterministicAnnealingSVC": _LINEAR_EXPECTED,
    **{
        name: _NET_EXPECTED
        for name in (
            "FixMatchClassifier",
            "FreeMatchClassifier",
            "AdshClassifier",
            "SemiSupervisedNet",
            "SupervisedNetClassifier",
        )
    },
}

#: skssl checks expected to fail, per estimator class name, with the reason.
EXPECTED_SEMI_SUPERVISED_FAILURES = {
    "LinearL2SVC": {
        "check_unlabeled_rows_change_fit": (
            "LinearL2SVC is the supervised l2-SVM-MFN baseline (and the inner "
            "solver of the S3VMs): it fits the labeled rows and ignores -1 rows by design"
        ),
    },
    "LabeledOnlyClassifier": {
        "check_unlabeled_rows_change_fit": (
            "LabeledOnlyClassifier is the supervised baseline around any classifier: "
            "it fits the labeled rows and ignores -1 rows by design"
        ),
    },
    "SupervisedNetClassifier": {
        "check_unlabeled_rows_change_fit": (
            "SupervisedNetClassifier is the labeled-only baseline of the deep family: "
            "it fits the labeled rows and ignores -1 rows by design"
        ),
    },
}


def _public_estimators():
    found = {}
    for info in pkgutil.walk_packages(skssl.__path__, prefix="skssl."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional family (deep) without its extra
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and issubclass(obj, ClassifierMixin):
                found[name] = obj
    return [found[name] for name in sorted(found)]


def _instances():
    estimators = [cls(**FAST_PARAMS.get(cls.__name__, {})) for cls in _public_estimators()]
    return estimators + [SeededCentroidClassifier()]


def _default_instances():
    """The estimators that FAST_PARAMS makes cheap by dropping a default safeguard, with every default."""
    return [cls() for cls in _public_estimators() if "safeguard" in FAST_PARAMS.get(cls.__name__, {})]


def _expected_failed_checks(estimator):
    return {**COMMON_EXPECTED_FAILURES, **EXPECTED_FAILURES.get(type(estimator).__name__, {})}


def _expected_semi_supervised_failures(estimator):
    return EXPECTED_SEMI_SUPERVISED_FAILURES.get(type(estimator).__name__, {})


def test_discovery_finds_every_exported_estimator():
    names = {cls.__name__ for cls in _public_estimators()}
    for module_name in ("skssl.svm", "skssl.self_training", "skssl.calibration"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        assert set(module.__all__) & names == {
            n
            for n in module.__all__
            if inspect.isclass(getattr(module, n)) and issubclass(getattr(module, n), BaseEstimator)
        }


@parametrize_with_checks(_instances(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@parametrize_with_semi_supervised_checks(_instances(), expected_failed_checks=_expected_semi_supervised_failures)
def test_semi_supervised_contract(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(_default_instances(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator_with_its_defaults(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_semi_supervised_checks(
    _default_instances(), expected_failed_checks=_expected_semi_supervised_failures
)
def test_semi_supervised_contract_with_its_defaults(estimator, check):
    check(estimator)
