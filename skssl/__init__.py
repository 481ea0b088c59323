"""skssl: scikit-learn compatible semi-supervised classifiers.

Fit every estimator as ``est.fit(X, y)`` with ``y == -1`` marking unlabeled
rows. The families live in subpackages:

* :mod:`skssl.svm` -- linear semi-supervised SVMs for large sparse data
  (l2-SVM-MFN, Transductive SVM, Deterministic Annealing S3VM);
* :mod:`skssl.deep` -- deep semi-supervised nets on skorch (needs the
  ``deep`` extra: torch and skorch);
* :mod:`skssl.self_training` -- meta-estimators around any classifier;
* :mod:`skssl.model_selection` -- cross-validation with unlabeled rows;
* :mod:`skssl.datasets` -- built-in data and experiment helpers.

:func:`show_versions` prints the versions and thread pools a bug report needs.
"""

from ._show_versions import show_versions
from ._version import __version__

__all__ = ["__version__", "show_versions"]
