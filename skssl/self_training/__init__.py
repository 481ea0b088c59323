"""Meta-estimators around any classifier.

* :class:`CurriculumLabelingClassifier` -- percentile-paced self-training
  with a fresh model every round (Cascante-Bonilla et al., AAAI 2021).
* :class:`LabeledOnlyClassifier` -- the supervised baseline: fits the wrapped
  classifier on the labeled rows only, so that it takes the same
  semi-supervised ``y`` (``-1`` for unlabeled rows), pipelines and splitters.
"""

from ._curriculum import CurriculumLabelingClassifier
from ._labeled_only import LabeledOnlyClassifier

__all__ = ["CurriculumLabelingClassifier", "LabeledOnlyClassifier"]
