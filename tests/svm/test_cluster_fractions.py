"""Class fractions from clusters of the rows (skssl.svm.defaults._cluster_fractions)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
from threadpoolctl import threadpool_limits

from skssl.svm import _base as svm_base
from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.datasets import load_pcmac
from skssl.svm.defaults import _cluster_fractions as cluster_fractions
from skssl.svm.defaults._cluster_fractions import MIN_LABELED, fractions_from_clusters


def _blobs(sizes, n_features=2, spread=1.0, distance=8.0, seed=0):
    """Well-separated Gaussian blobs, one per class, of the given sizes."""
    rng = np.random.RandomState(seed)
    centres = rng.randn(len(sizes), n_features)
    centres *= distance / np.linalg.norm(centres[0] - centres[1])
    X = np.vstack([rng.randn(n, n_features) * spread + c for n, c in zip(sizes, centres)])
    y = np.repeat(np.arange(len(sizes)), sizes)
    return X, y


def _label(y, per_class, seed=0):
    """A mask with ``per_class[k]`` labeled rows of class ``k``."""
    rng = np.random.RandomState(seed)
    mask = np.zeros(y.shape[0], dtype=bool)
    for k, n in enumerate(per_class):
        mask[rng.choice(np.flatnonzero(y == k), n, replace=False)] = True
    return mask


def _labels_say(y, mask):
    return np.bincount(y[mask], minlength=y.max() + 1) / mask.sum()


def test_skewed_labels_on_rows_that_cluster_by_class_take_the_clusters_shares():
    X, y = _blobs([150, 150])
    mask = _label(y, [16, 4])  # the labels say 0.8 / 0.2 for a balanced set
    out = fractions_from_clusters(X, y, mask, _labels_say(y, mask))
    truth = np.bincount(y[~mask]) / (~mask).sum()
    np.testing.assert_allclose(out, truth, atol=0.01)


def test_labels_within_one_standard_error_of_the_clusters_are_kept():
    X, y = _blobs([150, 150])
    mask = _label(y, [11, 9])  # 0.55 / 0.45: the standard error of 20 labels is 0.11
    said = _labels_say(y, mask)
    assert fractions_from_clusters(X, y, mask, said) is said


def test_clusters_that_are_not_the_classes_are_ignored():
    X, y = _blobs([150, 150])
    rng = np.random.RandomState(1)
    y_random = rng.randint(0, 2, y.shape[0])  # the rows cluster, but not by these labels
    mask = _label(y_random, [16, 4])
    said = _labels_say(y_random, mask)
    assert fractions_from_clusters(X, y_random, mask, said) is said


def test_too_few_labeled_rows_are_no_evidence():
    X, y = _blobs([150, 150])
    mask = _label(y, [MIN_LABELED - 2, 1])
    said = _labels_say(y, mask)
    assert fractions_from_clusters(X, y, mask, said) is said


def test_sparse_rows_with_64_bit_indices_give_the_dense_answer():
    X, y = _blobs([120, 80, 100], n_features=4)
    X = X - X.min() + 0.1  # positive, so that the CSR holds every value
    mask = _label(y, [14, 2, 4])
    said = _labels_say(y, mask)
    dense = fractions_from_clusters(X, y, mask, said)
    X_sparse = sp.csr_matrix(X)
    X_sparse.indices = X_sparse.indices.astype(np.int64)
    X_sparse.indptr = X_sparse.indptr.astype(np.int64)
    np.testing.assert_allclose(fractions_from_clusters(X_sparse, y, mask, said), dense)
    assert X_sparse.indices.dtype == np.int64  # the caller's matrix is left as it was


@pytest.mark.parametrize("seed", range(25))
def test_any_problem_gives_the_labels_or_positive_fractions_summing_to_one(seed):
    """Random blobs, overlapping or not, random label counts and weights: never a malformed vector."""
    rng = np.random.RandomState(seed)
    n_classes = rng.randint(2, 5)
    sizes = rng.randint(5, 60, n_classes)
    X, y = _blobs(sizes, n_features=rng.randint(1, 4), spread=rng.choice([0.3, 1.0, 5.0]), seed=seed)
    per_class = [rng.randint(1, n + 1) for n in sizes]
    mask = _label(y, per_class, seed)
    if mask.all():
        mask[0] = False
    said = _labels_say(y, mask)
    weight = None if rng.rand() < 0.5 else rng.randint(0, 3, y.shape[0]) + 0.5
    out = fractions_from_clusters(X, y, mask, said, weight)
    assert out is said or (out.shape == said.shape and np.all(out > 0) and np.isclose(out.sum(), 1.0))


@pytest.mark.parametrize("Estimator", [TransductiveSVC, DeterministicAnnealingSVC])
def test_estimators_enforce_the_clusters_shares_and_leave_a_given_fraction_alone(Estimator, monkeypatch):
    X, y = _blobs([150, 150])
    mask = _label(y, [16, 4])
    y_semi = np.where(mask, y, -1)
    fitted = Estimator().fit(X, y_semi)
    predicted_positive = np.mean(fitted.predict(X[~mask]) == 1)
    assert abs(predicted_positive - 0.5) < 0.05  # the labels' 0.2 would have been enforced

    def consulted(*args, **kwargs):
        raise AssertionError("a given positive_fraction must be used as given")

    monkeypatch.setattr(svm_base, "fractions_from_clusters", consulted)
    Estimator(positive_fraction=0.2).fit(X, y_semi)
    with pytest.raises(AssertionError, match="used as given"):
        Estimator().fit(X, y_semi)  # the patch is where the estimators look


def test_potts_takes_the_clusters_shares_of_several_classes():
    X, y = _blobs([100, 100, 100])
    mask = _label(y, [10, 3, 3])
    y_semi = np.where(mask, y, -1)
    fitted = PottsDeterministicAnnealingSVC().fit(X, y_semi)
    shares = np.bincount(fitted.predict(X[~mask]), minlength=3) / (~mask).sum()
    np.testing.assert_allclose(shares, 1 / 3, atol=0.05)


def test_verbose_says_when_the_clusters_replace_the_labels(capsys):
    X, y = _blobs([150, 150])
    mask = _label(y, [16, 4])
    TransductiveSVC(verbose=1).fit(X, np.where(mask, y, -1))
    assert "class fractions from clusters of the rows" in capsys.readouterr().out


def test_a_small_class_outside_its_own_cluster_does_not_pass_on_overall_purity():
    """90% overall is not enough: every class must have most of its labels in its own cluster."""
    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(270, 2), rng.randn(30, 2) * 0.3 + [6, 0], rng.randn(3, 2) * 0.1 + [0, 60]])
    y = np.repeat([0, 1, 1], [270, 30, 3])
    mask = np.zeros(303, dtype=bool)
    mask[:18] = mask[270:272] = True
    said = _labels_say(y, mask)
    assert fractions_from_clusters(X, y, mask, said) is said


@pytest.mark.parametrize("sparse", [False, True])
def test_neither_the_order_of_the_rows_nor_repeating_instead_of_weighting_changes_the_answer(sparse):
    X, y = _blobs([150, 150])
    X = np.round(X, 1)  # repeated rows
    mask = _label(y, [16, 4], seed=3)
    X, y, mask = np.vstack([X, X[:40]]), np.concatenate([y, y[:40]]), np.concatenate([mask, mask[:40]])
    said = _labels_say(y, mask)
    as_given = (lambda A: sp.csr_matrix(A)) if sparse else (lambda A: A)
    first = fractions_from_clusters(as_given(X + 20), y, mask, said)
    assert first is not said
    order = np.random.RandomState(1).permutation(y.shape[0])
    np.testing.assert_array_equal(fractions_from_clusters(as_given(X[order] + 20), y[order], mask[order], said), first)
    # Rows 300..339 repeat rows 0..39: drop the copies and give the originals weight 2 instead.
    weight = np.ones(300)
    weight[:40] = 2.0
    np.testing.assert_allclose(
        fractions_from_clusters(as_given(X[:300] + 20), y[:300], mask[:300], said, weight), first, rtol=1e-12
    )


@pytest.mark.parametrize("sparse", [False, True])
def test_the_callers_rows_are_left_as_they_were(sparse):
    X, y = _blobs([150, 150])
    X = X + 20
    mask = _label(y, [16, 4])
    X_in = sp.csr_matrix(X) if sparse else X.copy()
    before = X_in.copy()
    fractions_from_clusters(X_in, y, mask, _labels_say(y, mask))
    if sparse:
        assert (X_in != before).nnz == 0 and X_in.indices.dtype == before.indices.dtype
    else:
        np.testing.assert_array_equal(X_in, before)


@pytest.mark.parametrize("Estimator", [TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC])
def test_one_fit_clusters_the_rows_once(Estimator, monkeypatch):
    """The safeguard's candidates take the fit's fractions; none of them runs k-means again."""
    X, y = _blobs([150, 150])
    mask = _label(y, [16, 4])
    calls, kmeans = [], []
    monkeypatch.setattr(
        svm_base,
        "fractions_from_clusters",
        lambda *args, **kwargs: calls.append(1) or fractions_from_clusters(*args, **kwargs),
    )
    kmeans_labels = cluster_fractions._kmeans_labels
    monkeypatch.setattr(cluster_fractions, "_kmeans_labels", lambda *args: kmeans.append(1) or kmeans_labels(*args))
    Estimator(safeguard="agreement").fit(X, np.where(mask, y, -1))
    assert len(calls) == 1 and len(kmeans) == 1
    # The cross-validated fallback's fold fits do not know the held-out labels: each works its fractions out,
    # from the clusters of the fit's rows, which do not depend on the labels: k-means runs once.
    calls.clear()
    kmeans.clear()
    fitted = Estimator(safeguard="cross_validation").fit(X, np.where(mask, y, -1))
    assert len(calls) == 1 + 4 and fitted.safeguard_scores_ is not None  # 4 folds: 4 labels in the small class
    assert len(kmeans) == 1


def _wide_topics(n_per_class=(120, 80), n_features=400, seed=0):
    """Sparse rows of many columns whose non-zeros come mostly from their class's own columns."""
    rng = np.random.RandomState(seed)
    rows, y = [], []
    for k, n in enumerate(n_per_class):
        own = np.arange(k * 150, k * 150 + 150)
        for _ in range(n):
            cols = np.unique(np.concatenate([rng.choice(own, 12), rng.choice(n_features, 4)]))
            row = np.zeros(n_features)
            row[cols] = rng.rand(cols.size) + 0.5
            rows.append(row / np.linalg.norm(row))
            y.append(k)
    return sp.csr_matrix(np.array(rows)), np.array(y)


def test_rows_of_many_columns_are_clustered_in_their_latent_space():
    X, y = _wide_topics()
    mask = _label(y, [4, 16])  # the labels say 0.2 / 0.8 where the rows say 0.6 / 0.4
    out = fractions_from_clusters(X, y, mask, _labels_say(y, mask))
    truth = np.bincount(y[~mask]) / (~mask).sum()
    np.testing.assert_allclose(out, truth, atol=0.02)


def test_the_latent_space_depends_on_neither_the_order_of_the_rows_nor_repeats():
    X, y = _wide_topics(seed=1)
    mask = _label(y, [4, 16], seed=2)
    said = _labels_say(y, mask)
    first = fractions_from_clusters(X, y, mask, said)
    assert first is not said
    order = np.random.RandomState(3).permutation(y.shape[0])
    np.testing.assert_allclose(fractions_from_clusters(X[order], y[order], mask[order], said), first, rtol=1e-12)
    repeated = sp.vstack([X, X[:30]]).tocsr()
    y_rep, mask_rep = np.concatenate([y, y[:30]]), np.concatenate([mask, mask[:30]])
    weight = np.ones(y.shape[0])
    weight[:30] = 2.0
    np.testing.assert_allclose(
        fractions_from_clusters(repeated, y_rep, mask_rep, said),
        fractions_from_clusters(X, y, mask, said, weight),
        rtol=1e-12,
    )


def _pcmac_fractions(monkeypatch=None, seed=None):
    data = load_pcmac()
    mask = data.y_train != -1
    classes = np.unique(data.y_train[mask])
    y_enc = np.zeros(mask.shape[0], dtype=np.intp)
    y_enc[mask] = np.searchsorted(classes, data.y_train[mask])
    if seed is not None:
        monkeypatch.setattr(cluster_fractions, "SEED", seed)
    said = _labels_say(y_enc, mask)
    test_share = np.mean(data.y_test == classes[1])
    return fractions_from_clusters(data.X_train, y_enc, mask, said), said, test_share


def test_pcmac_clusters_give_the_balance_its_labels_miss():
    """pcmac's 50 labels say 0.42 for a task that is balanced (its test set: 0.498)."""
    out, said, test_share = _pcmac_fractions()
    assert out is not said
    assert abs(out[1] - test_share) < 0.04


@pytest.mark.slow
def test_the_pcmac_balance_is_no_lucky_draw_of_the_seed(monkeypatch):
    found = [_pcmac_fractions(monkeypatch, seed) for seed in range(1, 7)]
    fired = [out for out, said, _ in found if out is not said]
    assert len(fired) >= 5
    test_share = found[0][2]
    assert all(abs(out[1] - test_share) < 0.04 for out in fired)


@pytest.mark.parametrize("n_features", [4, cluster_fractions.LATENT_DIM + 5])
def test_k_means_runs_on_one_openmp_thread_whatever_the_machine(n_features, monkeypatch):
    """With several OpenMP threads scikit-learn's Lloyd adds the threads' partial centres in the order they
    finish, so the clusters would depend on timing and on the number of cores; one thread sums in row order."""
    seen = []
    original = cluster_fractions.KMeans.fit

    def recording_fit(self, *args, **kwargs):
        seen.append(_openmp_effective_n_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cluster_fractions.KMeans, "fit", recording_fit)
    rng = np.random.RandomState(0)
    X = rng.randn(600, n_features) + 3.0 * (np.arange(600) % 2)[:, None]
    with threadpool_limits(4):  # as on a machine of 4 cores or more
        cluster_fractions._kmeans_labels(X, 2, np.ones(600))
    assert seen and set(seen) == {1}
