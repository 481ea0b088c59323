"""Curriculum Labeling around LogisticRegression, with and without its safeguard."""

from sklearn.linear_model import LogisticRegression

from skssl.self_training import CurriculumLabelingClassifier

from .common import EstimatorBenchmark


class Curriculum(EstimatorBenchmark):
    params = (["digits", "pcmac"], ["defaults", "no safeguard"])
    param_names = ["dataset", "settings"]

    def make(self, dataset, settings):
        params = {} if settings == "defaults" else {"safeguard": None}
        return CurriculumLabelingClassifier(LogisticRegression(max_iter=1000), random_state=0, **params)
