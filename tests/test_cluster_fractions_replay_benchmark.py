"""benchmarks/cluster_fractions_replay.py: the probe of the rule's inputs, the old module and the replay of a set."""

import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import Bunch

import skssl.svm._base as svm_base
import skssl.svm.defaults._cluster_fractions as new_module

from ._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def replay():
    return load_benchmark("cluster_fractions_replay")


@pytest.fixture(scope="module")
def old_module(replay, tmp_path_factory):
    try:
        return replay.load_old_module(tmp_path_factory.mktemp("old"))
    except (subprocess.CalledProcessError, OSError):
        pytest.skip(f"the repository's history does not hold {replay.OLD_COMMIT}")


def _blobs(n_features, seed=0):
    """Two clusters of 100 rows, the labels' fractions 0.8 / 0.2 against the truth's 0.5 / 0.5."""
    rng = np.random.RandomState(seed)
    X = np.abs(rng.randn(200, n_features)) * 0.1
    X[:100, : n_features // 2] += 1.0
    X[100:, n_features // 2 :] += 1.0
    y = np.repeat([0, 1], 100)
    y_semi = np.full(200, -1)
    y_semi[:16], y_semi[100:104] = 0, 1
    return X, y, y_semi


def _toy_dataset(replay, X, y, y_semi):
    data = Bunch(X_train=X, y_train=y, X_test=X, y_test=y)
    uv = replay.uv
    return uv.Dataset("toy", "text", "dev", lambda: data, lambda d, draw, **kw: uv.Split(X, y_semi, X, y, [])), data


def test_the_probe_hands_over_what_the_fit_passes_and_restores_skssl(replay):
    X, y, y_semi = _blobs(4)
    rule = svm_base.fractions_from_clusters
    got_X, y_enc, mask, fractions, weight = replay.rule_inputs(replay.uv.Split(X, y_semi, X, y, []))
    assert svm_base.fractions_from_clusters is rule
    np.testing.assert_array_equal(got_X, X)
    np.testing.assert_array_equal(mask, y_semi != -1)
    np.testing.assert_array_equal(y_enc[mask], y_semi[mask])
    np.testing.assert_allclose(fractions, [0.8, 0.2])
    assert weight is None


def test_the_old_module_clusters_the_raw_rows(old_module):
    assert not hasattr(old_module, "_latent_directions")
    X, y, y_semi = _blobs(4)
    mask = y_semi != -1
    args = (X, np.where(mask, y_semi, 0), mask, np.array([0.8, 0.2]))
    # At most LATENT_DIM columns both versions run the same k-means.
    np.testing.assert_array_equal(old_module.fractions_from_clusters(*args), new_module.fractions_from_clusters(*args))


def test_a_replayed_draw_gives_both_answers_and_the_truth(replay, old_module):
    X, y, y_semi = _blobs(2 * (new_module.LATENT_DIM + 10))
    dataset, data = _toy_dataset(replay, sp.csr_matrix(X), y, y_semi)
    rec = replay.replay(dataset, data, 0, old_module)
    assert rec["status"] == "ok" and rec["n_features"] == X.shape[1]
    np.testing.assert_allclose(rec["labels"], [0.8, 0.2])
    np.testing.assert_allclose(rec["truth"], [84 / 180, 96 / 180])
    for name in ("old", "new"):
        assert rec[f"{name}_fired"] and rec[f"{name}_purity"] == 1.0
        np.testing.assert_allclose(rec[name], rec["truth"])
    assert not replay.changed(rec)


def test_a_draw_of_few_columns_is_skipped(replay, old_module):
    X, y, y_semi = _blobs(new_module.LATENT_DIM)
    dataset, data = _toy_dataset(replay, X, y, y_semi)
    rec = replay.replay(dataset, data, 0, old_module)
    assert rec["status"] == "skipped" and "old" not in rec


def test_changed_outcomes(replay):
    kept = dict(old_fired=False, new_fired=False, old=[0.8, 0.2], new=[0.8, 0.2])
    assert not replay.changed(kept)
    assert replay.changed(dict(kept, new_fired=True, new=[0.5, 0.5]))
    both = dict(old_fired=True, new_fired=True, old=[0.5, 0.5], new=[0.5, 0.5])
    assert not replay.changed(both)
    assert replay.changed(dict(both, new=[0.45, 0.55]))
