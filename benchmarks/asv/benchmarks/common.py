"""What every estimator benchmark shares: fit once per parameter set, then time, memory and tracked values."""

from .datasets import load


class EstimatorBenchmark:
    """Base of an estimator's benchmarks; a subclass gives ``params``, ``param_names`` and ``make``.

    ``make(*params)`` returns the unfitted estimator; the first parameter is the
    data set's name. asv runs ``setup`` before each measurement.
    """

    timeout = 600

    def make(self, *params):
        raise NotImplementedError

    def setup(self, dataset, *params):
        self.X, self.y_semi, self.X_test, self.y_test = load(dataset)
        self.estimator = self.make(dataset, *params)
        self.fitted = self.make(dataset, *params).fit(self.X, self.y_semi)

    def time_fit(self, *params):
        self.estimator.fit(self.X, self.y_semi)

    def peakmem_fit(self, *params):
        self.estimator.fit(self.X, self.y_semi)

    def track_test_score(self, *params):
        return float(self.fitted.score(self.X_test, self.y_test))

    track_test_score.unit = "accuracy"
