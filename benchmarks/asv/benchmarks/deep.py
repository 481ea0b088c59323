"""The deep family (needs torch and skorch): a short FixMatch and FreeMatch fit on digits' pixels.

The nets train for a fixed number of steps, so the time measures the training
loop, and the tracked accuracy whether it still learns.
"""

from .common import EstimatorBenchmark

try:
    from skssl.deep import FixMatchClassifier, FreeMatchClassifier
except ImportError:  # the deep extra is not installed: asv skips what setup cannot build
    FixMatchClassifier = FreeMatchClassifier = None

NETS = {"FixMatchClassifier": FixMatchClassifier, "FreeMatchClassifier": FreeMatchClassifier}


class DeepNet(EstimatorBenchmark):
    params = (["digits"], list(NETS))
    param_names = ["dataset", "estimator"]
    timeout = 900

    def make(self, dataset, estimator):
        if NETS[estimator] is None:
            raise NotImplementedError("skssl.deep needs torch and skorch (pip install 'skssl[deep]')")
        return NETS[estimator](max_epochs=5, iterations_per_epoch=20, random_state=0)
