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


def _search():
    return GridSearchCV(TransductiveSVC(), GRID, cv=SemiSupervisedKFold(3), n_jobs=-1)


def test_grid_search_on_a_local_cluster_matches_one_process(client, pcmac_subset):
    X, y = pcmac_subset
    with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        on_cluster = _search().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoUnlabeledDataWarning)
        local = GridSearchCV(TransductiveSVC(), GRID, cv=SemiSupervisedKFold(3), n_jobs=1).fit(X, y)
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
