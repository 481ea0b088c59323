"""Meta-estimators that turn any classifier into a semi-supervised one.

* :class:`CurriculumLabelingClassifier` -- percentile-paced self-training
  with a fresh model every round (Cascante-Bonilla et al., AAAI 2021).
"""

from ._curriculum import CurriculumLabelingClassifier

__all__ = ["CurriculumLabelingClassifier"]
