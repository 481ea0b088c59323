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
