"""Every fitted public estimator survives pickle, joblib and skops.io with identical outputs.

pickle and joblib files are loaded in a *fresh* Python process (one subprocess for all cases,
started after every estimator is fitted and dumped), which must give exactly the same
``predict`` / ``predict_proba`` / ``decision_function`` as the fitted object. The cases cover
every exported estimator (discovered, so a new one is covered at once), fitted with string
labels in an object array mixed with the integer -1, and Curriculum Labeling around a deep net.
"""

import importlib
import importlib.util
import inspect
import json
import os
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression

import skssl

ROOT = Path(__file__).resolve().parents[1]
HAS_DEEP = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("skorch") is not None
METHODS = ("predict", "predict_proba", "decision_function")

_FAST_NET = {"max_epochs": 2, "iterations_per_epoch": 5, "random_state": 0}
#: Small, fast settings per estimator class (the code paths are those of the defaults).
FAST_PARAMS = {
    "CurriculumLabelingClassifier": {"estimator": LogisticRegression(), "random_state": 0},
    "LabeledOnlyClassifier": {"estimator": LogisticRegression()},
    "FixMatchClassifier": _FAST_NET,
    "FreeMatchClassifier": _FAST_NET,
    "AdshClassifier": _FAST_NET,
    "SemiSupervisedNet": _FAST_NET,
    "SupervisedNetClassifier": {"max_epochs": 2, "random_state": 0},
}


def _public_estimator_classes():
    found = {}
    for info in pkgutil.walk_packages(skssl.__path__, prefix="skssl."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # the deep family without its extra
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and issubclass(obj, ClassifierMixin):
                found[name] = obj
    return [found[name] for name in sorted(found)]


def _cases():
    cases = {
        cls.__name__: (lambda cls=cls: cls(**FAST_PARAMS.get(cls.__name__, {}))) for cls in _public_estimator_classes()
    }
    if HAS_DEEP:
        from skssl.deep import SupervisedNetClassifier
        from skssl.self_training import CurriculumLabelingClassifier

        cases["CurriculumLabelingClassifier-net"] = lambda: CurriculumLabelingClassifier(
            SupervisedNetClassifier(max_epochs=2, random_state=0), step=50, random_state=0
        )
    return cases


CASES = _cases()


def _data():
    X, y = make_blobs(90, centers=3, n_features=4, random_state=0)
    X = X.astype(np.float32)
    names = np.array(["ant", "bee", "cat"], dtype=object)
    y_semi = names[y].copy()
    y_semi[np.random.RandomState(0).rand(90) < 0.7] = -1
    y_semi[[0, 1, 2]] = names[y[[0, 1, 2]]]  # make sure every class keeps a label
    for k in range(3):
        y_semi[np.flatnonzero(y == k)[0]] = names[k]
    return X, y_semi


def _outputs(estimator, X):
    return {m: getattr(estimator, m)(X) for m in METHODS if hasattr(estimator, m)}


@pytest.fixture(scope="module")
def fitted():
    X, y_semi = _data()
    return {case: factory().fit(X, y_semi) for case, factory in CASES.items()}, X


@pytest.fixture(scope="module")
def fresh_process_report(fitted, tmp_path_factory):
    """Dump every fitted estimator, load them all in one fresh interpreter, return its report."""
    estimators, X = fitted
    tmp = tmp_path_factory.mktemp("persistence")
    np.save(tmp / "X.npy", X)
    manifest = {"report": str(tmp / "report.json"), "cases": []}
    for case, est in estimators.items():
        files = {"pickle": str(tmp / f"{case}.pkl"), "joblib": str(tmp / f"{case}.joblib")}
        with open(files["pickle"], "wb") as f:
            pickle.dump(est, f)
        joblib.dump(est, files["joblib"])
        np.savez(tmp / f"{case}.npz", **_outputs(est, X))
        manifest["cases"].append(
            {"id": case, "files": files, "X": str(tmp / "X.npy"), "expected": str(tmp / f"{case}.npz")}
        )
    (tmp / "manifest.json").write_text(json.dumps(manifest))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "_persistence_child.py"), str(tmp / "manifest.json")],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp / "report.json").read_text())


def test_every_public_estimator_is_a_case():
    names = {cls.__name__ for cls in _public_estimator_classes()}
    assert names <= set(CASES)
    assert {"LinearL2SVC", "TransductiveSVC", "DeterministicAnnealingSVC", "CurriculumLabelingClassifier"} <= names
    if HAS_DEEP:
        assert {"FixMatchClassifier", "FreeMatchClassifier", "AdshClassifier", "SupervisedNetClassifier"} <= names


def test_the_loading_process_is_fresh(fresh_process_report):
    assert fresh_process_report["_skssl_imported_at_start"] is False


@pytest.mark.parametrize("fmt", ["pickle", "joblib"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip_in_a_fresh_process(case, fmt, fresh_process_report, fitted):
    assert fresh_process_report[case][fmt] == "ok", fresh_process_report[case][fmt]
    estimators, _ = fitted
    assert {"ant", "bee", "cat"} == set(estimators[case].classes_)


#: Type prefixes that loading a skssl estimator with skops may need to trust (see the "Saving
#: models" page): skssl's classes, and for the deep nets skorch's and torch's objects.
TRUSTABLE_PREFIXES = ("skssl.", "skorch.", "torch.", "builtins.print", "functools.partial")


@pytest.mark.parametrize("case", sorted(CASES))
def test_skops_round_trip_with_trusted_types(case, fitted, tmp_path):
    sio = pytest.importorskip("skops.io")
    estimators, X = fitted
    est = estimators[case]
    path = tmp_path / f"{case}.skops"
    sio.dump(est, path)
    untrusted = sio.get_untrusted_types(file=path)
    assert f"{type(est).__module__}.{type(est).__name__}" in untrusted
    assert all(name.startswith(TRUSTABLE_PREFIXES) for name in untrusted), untrusted
    if not case.endswith("-net") and type(est).__module__.startswith(("skssl.svm", "skssl.self_training")):
        # linear models and Curriculum around a sklearn model: only the skssl class itself
        assert untrusted == [f"{type(est).__module__}.{type(est).__name__}"]
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException):
        sio.load(path)
    loaded = sio.load(path, trusted=untrusted)
    expected = _outputs(est, X)
    for method, value in _outputs(loaded, X).items():
        np.testing.assert_array_equal(value, expected[method], err_msg=method)
