"""Deep semi-supervised classifiers on skorch (needs torch and skorch: ``pip install skssl[deep]``).

* :class:`FixMatchClassifier`, :class:`FreeMatchClassifier`,
  :class:`AdshClassifier` -- the public estimators: :class:`SemiSupervisedNet`,
  the FixMatch-style skorch core, with each paper's masking policy;
* :class:`SupervisedNetClassifier` -- the same default nets trained on
  labeled rows only (baseline, and the default estimator of Curriculum
  Labeling);
* masking policies :class:`FixedThreshold`, :class:`SelfAdaptiveThreshold`,
  :class:`ClassAdaptiveThreshold` (tunable as ``masking__threshold`` ...);
* augmentations :class:`GaussianNoise`, :class:`RandomShift`,
  :class:`RandAugment`; default modules :class:`MLPModule`, :class:`SmallCNN`.
"""

try:
    import skorch  # noqa: F401
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("skssl.deep needs torch and skorch; install them with `pip install skssl[deep]`.") from exc

from ._augment import GaussianNoise, RandAugment, RandomShift, default_augmentations
from ._classifiers import AdshClassifier, FixMatchClassifier, FreeMatchClassifier
from ._core import SemiSupervisedNet
from ._modules import MLPModule, SmallCNN, default_module_for
from ._supervised import SupervisedNetClassifier
from ._thresholds import ClassAdaptiveThreshold, FixedThreshold, SelfAdaptiveThreshold

__all__ = [
    "AdshClassifier",
    "ClassAdaptiveThreshold",
    "FixMatchClassifier",
    "FixedThreshold",
    "FreeMatchClassifier",
    "GaussianNoise",
    "MLPModule",
    "RandAugment",
    "RandomShift",
    "SelfAdaptiveThreshold",
    "SemiSupervisedNet",
    "SmallCNN",
    "SupervisedNetClassifier",
    "default_augmentations",
    "default_module_for",
]
