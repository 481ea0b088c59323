"""The linear family: l2-SVM-MFN, TSVM, deterministic annealing and Potts, sparse text and dense rows."""

import numpy as np

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC

from .common import EstimatorBenchmark

ESTIMATORS = {
    "LinearL2SVC": LinearL2SVC,
    "TransductiveSVC": TransductiveSVC,
    "DeterministicAnnealingSVC": DeterministicAnnealingSVC,
}


class LinearS3VM(EstimatorBenchmark):
    """Binary and one-vs-rest fits with the defaults and with SVMlin's settings (``alpha=1e-3``, no safeguard)."""

    params = (["pcmac", "dense-binary", "dense-3class"], list(ESTIMATORS), ["defaults", "svmlin"])
    param_names = ["dataset", "estimator", "settings"]

    def make(self, dataset, estimator, settings):
        cls = ESTIMATORS[estimator]
        if settings == "defaults":
            return cls(n_jobs=1)
        params = {"alpha": 1e-3, "n_jobs": 1}
        if cls is not LinearL2SVC:
            params["safeguard"] = None
            if dataset == "pcmac":
                params["positive_fraction"] = 0.5
        return cls(**params)

    def track_objective(self, *params):
        return float(np.sum(self.fitted.objective_))


class Potts(EstimatorBenchmark):
    """The multi-class deterministic annealing on dense rows and on digits."""

    params = (["dense-3class", "digits"], ["defaults", "no safeguard"])
    param_names = ["dataset", "settings"]

    def make(self, dataset, settings):
        return PottsDeterministicAnnealingSVC(n_jobs=1, **({} if settings == "defaults" else {"safeguard": None}))

    def track_objective(self, *params):
        return float(self.fitted.objective_)


class DistinctRows:
    """The order of the rows by their values that the checks' folds deal from, dense and CSR, with many ties.

    Its cost must grow with the non-zeros of CSR rows, never with ``n_features``: the CSR case has 10^6 columns.
    """

    params = (["dense", "csr"],)
    param_names = ["format"]
    timeout = 120

    def setup(self, fmt):
        import scipy.sparse as sp

        rng = np.random.RandomState(0)
        n_rows, n_distinct = 20_000, 2_000
        if fmt == "dense":
            base = rng.standard_normal((n_distinct, 50))
            self.X = base[rng.randint(n_distinct, size=n_rows)]
        else:
            # 100 non-zeros per row among 10^6 columns (built directly: ``sp.random`` takes minutes at this width)
            indices = np.sort(rng.randint(10**6, size=(n_distinct, 100)), axis=1)
            base = sp.csr_matrix(
                (rng.standard_normal(indices.size), indices.ravel(), np.arange(0, indices.size + 1, 100)),
                shape=(n_distinct, 10**6),
            )
            base.sum_duplicates()
            self.X = base[rng.randint(n_distinct, size=n_rows)]

    def time_distinct_rows(self, fmt):
        from skssl.svm.kernels._row_order import distinct_rows

        distinct_rows(self.X)
