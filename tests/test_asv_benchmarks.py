"""The asv regression benchmarks (benchmarks/asv) import and run: one parameter set of each, once.

asv itself is not needed: the benchmark classes are plain Python, and asv calls
``setup`` then a method with the parameters, as done here.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

ASV_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "asv"


@pytest.fixture(scope="module")
def suite():
    sys.path.insert(0, str(ASV_DIR))
    try:
        yield {name: importlib.import_module(f"benchmarks.{name}") for name in ("linear", "self_training", "deep")}
    finally:
        sys.path.remove(str(ASV_DIR))
        for name in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
            del sys.modules[name]


def _small(name):
    """A small split standing in for the benchmark's data set, so that these tests stay fast."""
    from sklearn.datasets import make_classification

    n_classes = 3 if name in ("dense-3class", "digits") else 2
    X, y = make_classification(
        n_samples=300, n_features=20, n_informative=6, n_classes=n_classes, class_sep=2.0, random_state=0
    )
    y_semi = y.copy()
    y_semi[30:240] = -1
    return X[:240], y_semi[:240], X[240:], y[240:]


@pytest.fixture
def small_data(suite, monkeypatch):
    monkeypatch.setattr(sys.modules["benchmarks.common"], "load", _small)


def test_the_data_sets_load(suite):
    datasets = sys.modules["benchmarks.datasets"]
    for name in datasets.DATASETS:
        X, y_semi, X_test, y_test = datasets.load(name)
        assert X.shape[0] == y_semi.shape[0] and X_test.shape[0] == y_test.shape[0]
        assert 0 < np.sum(y_semi != -1) < y_semi.shape[0]
    with pytest.raises(ValueError, match="unknown data set"):
        datasets.load("nope")


def _run(benchmark, params):
    benchmark.setup(*params)
    benchmark.time_fit(*params)
    score = benchmark.track_test_score(*params)
    assert 0.0 <= score <= 1.0
    return score


def test_every_benchmark_has_its_parameters(suite):
    for module in suite.values():
        for name in dir(module):
            cls = getattr(module, name)
            if isinstance(cls, type) and hasattr(cls, "params") and name != "EstimatorBenchmark":
                assert len(cls.params) == len(cls.param_names), name


def test_linear_benchmarks_run_and_track_the_objective(suite, small_data):
    bench = suite["linear"].LinearS3VM()
    assert _run(bench, ("dense-binary", "TransductiveSVC", "svmlin")) > 0.6
    assert np.isfinite(bench.track_objective("dense-binary", "TransductiveSVC", "svmlin"))
    potts = suite["linear"].Potts()
    _run(potts, ("dense-3class", "no safeguard"))
    assert np.isfinite(potts.track_objective("dense-3class", "no safeguard"))


def test_self_training_benchmark_runs(suite, small_data):
    assert _run(suite["self_training"].Curriculum(), ("digits", "no safeguard")) > 0.6


def test_deep_benchmark_runs_or_says_why_not(suite, small_data):
    bench = suite["deep"].DeepNet()
    if suite["deep"].FixMatchClassifier is None:
        with pytest.raises(NotImplementedError, match="torch and skorch"):
            bench.setup("digits", "FixMatchClassifier")
        return
    bench.make = lambda dataset, estimator: suite["deep"].NETS[estimator](
        max_epochs=1, iterations_per_epoch=2, random_state=0
    )
    _run(bench, ("digits", "FixMatchClassifier"))


def test_row_order_benchmark_runs_on_both_formats(suite):
    bench = suite["linear"].DistinctRows()
    for fmt in ("dense", "csr"):
        bench.setup(fmt)
        assert bench.X.shape[0] == 20_000
        bench.time_distinct_rows(fmt)
