"""Hyper-parameter search over skssl estimators on a Dask cluster, through joblib's Dask backend.

The documented path of the "Scaling out" page: ``GridSearchCV(..., n_jobs=-1)`` inside
``joblib.parallel_backend("dask")`` with a ``dask.distributed.Client`` on a ``LocalCluster``.
The search must run its fits as tasks on the workers and find exactly what the same search
finds in one process.
"""

import logging
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV

from skssl.base import NoUnlabeledDataWarning
from skssl.datasets import load_pcmac
from skssl.model_selection import SemiSupervisedKFold
from skssl.svm import TransductiveSVC

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'skssl[scale]')"
)
joblib = pytest.importorskip("joblib")

GRID = {"alpha": [1e-3, 1e-2, 1e-1], "unlabeled_weight": [0.1, 1.0]}


@pytest.fixture(scope="module")
def pcmac_subset():
    """pcmac's 50 labeled rows and 350 unlabeled ones: a 6-candidate search stays a few seconds."""
    X, y, _, _ = load_pcmac(return_X_y=True)
    rows = np.sort(np.concatenate([np.flatnonzero(y != -1), np.flatnonzero(y == -1)[:350]]))
    return X[rows], y[rows]


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # port-in-use and similar start-up chatter
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )
    with cluster, distributed.Client(cluster) as client:
        yield client


def _search(n_jobs=-1):
    # The search's distribution is tested, not the safeguard: its checks would multiply every candidate's fits.
    return GridSearchCV(TransductiveSVC(safeguard=None), GRID, cv=SemiSupervisedKFold(3), n_jobs=n_jobs)


def test_grid_search_on_a_local_cluster_matches_one_process(client, pcmac_subset):
    X, y = pcmac_subset
    with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        on_cluster = _search().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoUnlabeledDataWarning)
        local = _search(n_jobs=1).fit(X, y)
    # 6 candidates x 3 folds ran as tasks on the workers (joblib may batch several fits per task).
    workers = {task["worker"] for task in stream.data}
    assert stream.data and workers <= set(client.scheduler_info()["workers"])
    assert on_cluster.best_params_ == local.best_params_
    np.testing.assert_allclose(on_cluster.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"])
    np.testing.assert_allclose(on_cluster.best_estimator_.coef_, local.best_estimator_.coef_, rtol=1e-10, atol=1e-12)
    assert len(on_cluster.cv_results_["params"]) == 6


def test_workers_run_blas_with_one_thread(client):
    """Dask starts worker processes with OMP/MKL/OPENBLAS_NUM_THREADS=1: one BLAS thread per task."""
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        import numpy  # noqa: F401  (loads the BLAS library)

        return sorted({pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"})

    per_worker = client.run(blas_threads)
    assert per_worker and all(threads == [1] for threads in per_worker.values()), per_worker


# --- prediction on Dask arrays: lazy, block by block on the workers (skssl.utils._dask) ----------------------


def _dask_problem(n_classes, sparse):
    from sklearn.datasets import make_classification

    from skssl.datasets import make_semi_supervised

    X, y = make_classification(260, 12, n_informative=6, n_classes=n_classes, random_state=n_classes)
    if sparse:
        X = sp.csr_matrix(X * (np.abs(X) > 0.8))
    return X, y, make_semi_supervised(y, 40, random_state=0)


PREDICTORS = ["LinearL2SVC", "TransductiveSVC", "DeterministicAnnealingSVC", "PottsDeterministicAnnealingSVC"]
CHUNKINGS = [((130, 130), (12,)), ((100, 0, 150, 10), (12,)), ((260,), (5, 7)), ((1, 0, 259), (6, 6))]


CASES = [(name, k, sparse) for name in PREDICTORS for k, sparse in [(2, True), (3, False), (3, True)]]


@pytest.mark.parametrize("name, n_classes, sparse", [c for c in CASES if c[0] != PREDICTORS[-1] or c[1] > 2])
def test_prediction_on_a_dask_array_is_lazy_and_the_same(client, name, n_classes, sparse):
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    import skssl.svm

    X, y, y_semi = _dask_problem(n_classes, sparse)
    # Prediction is what is tested: the in-memory model may come from a fit without the safeguard's checks.
    est = getattr(skssl.svm, name)(**({} if name == "LinearL2SVC" else {"safeguard": None})).fit(X, y_semi)
    weight = np.random.RandomState(0).rand(X.shape[0])
    y_scored = np.where(np.arange(X.shape[0]) % 4 == 0, -1, y)  # the -1 rows are left out of the score
    for chunks in CHUNKINGS:
        X_dask = da.from_array(X, chunks=chunks, asarray=False)
        scores, labels = est.decision_function(X_dask), est.predict(X_dask)
        assert isinstance(scores, da.Array) and isinstance(labels, da.Array)  # nothing computed yet
        assert scores.chunks[0] == X_dask.chunks[0] and labels.chunks[0] == X_dask.chunks[0]
        scores, labels = dask.compute(scores, labels)  # one round trip to the workers for both
        np.testing.assert_allclose(scores, est.decision_function(X), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(labels, est.predict(X))
        assert est.score(X_dask, y_scored) == pytest.approx(est.score(X, y_scored), abs=1e-12)
        y_dask = da.from_array(y_scored, chunks=(X_dask.chunks[0],))
        w_dask = da.from_array(weight, chunks=(X_dask.chunks[0],))
        assert est.score(X_dask, y_dask, sample_weight=w_dask) == pytest.approx(
            est.score(X, y_scored, sample_weight=weight), abs=1e-12
        )


def test_scores_of_a_dask_array_run_on_the_workers(client):
    da = pytest.importorskip("dask.array")
    from skssl.svm import TransductiveSVC

    X, y, y_semi = _dask_problem(2, True)
    est = TransductiveSVC().fit(X, y_semi)
    X_dask = da.from_array(X, chunks=((65, 65, 65, 65), (12,)), asarray=False)
    with distributed.get_task_stream(client) as stream:
        labels = client.compute(est.predict(X_dask)).result()
    np.testing.assert_array_equal(labels, est.predict(X))
    assert {task["worker"] for task in stream.data} <= set(client.scheduler_info()["workers"]) and stream.data


def test_dask_score_without_labeled_rows_raises(client):
    da = pytest.importorskip("dask.array")
    from skssl.svm import LinearL2SVC

    X, y, y_semi = _dask_problem(2, False)
    est = LinearL2SVC().fit(X, y_semi)
    X_dask = da.from_array(X, chunks=((130, 130), (12,)))
    with pytest.raises(ValueError, match="every row of y is -1"):
        est.score(X_dask, np.full(X.shape[0], -1))
