"""Load pickled and joblib-dumped skssl estimators in a fresh process and compare their outputs.

Run by ``tests/test_persistence.py`` as ``python tests/_persistence_child.py manifest.json``.
Imports nothing from skssl itself: unpickling must import what it needs. Writes a JSON report
``{case: {format: "ok" | error text}}`` next to the manifest.
"""

import json
import pickle
import sys
import traceback

import joblib
import numpy as np

METHODS = ("predict", "predict_proba", "decision_function")


def _check(estimator, X, expected):
    for method in METHODS:
        if method not in expected:
            continue
        np.testing.assert_array_equal(getattr(estimator, method)(X), expected[method], err_msg=method)


def main(manifest_path):
    with open(manifest_path) as f:
        manifest = json.load(f)
    report = {"_skssl_imported_at_start": "skssl" in sys.modules}
    for case in manifest["cases"]:
        X = np.load(case["X"], allow_pickle=False)
        with np.load(case["expected"], allow_pickle=True) as data:
            expected = {key: data[key] for key in data.files}
        results = {}
        for fmt, path in case["files"].items():
            try:
                if fmt == "pickle":
                    with open(path, "rb") as f:
                        estimator = pickle.load(f)
                else:
                    estimator = joblib.load(path)
                _check(estimator, X, expected)
                results[fmt] = "ok"
            except Exception:
                results[fmt] = traceback.format_exc(limit=4)
        report[case["id"]] = results
    with open(manifest["report"], "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1])
