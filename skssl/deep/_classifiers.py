"""The public semi-supervised nets: the core net with each paper's policy and defaults.

Each class only sets what differs from :class:`~skssl.deep.SemiSupervisedNet`:
its default masking policy (used when ``masking=None``) and the defaults its
paper fixes. Everything else, parameters included, is the core's.
"""

from ._core import SemiSupervisedNet
from ._thresholds import ClassAdaptiveThreshold, FixedThreshold, SelfAdaptiveThreshold

__all__ = ["FixMatchClassifier", "FreeMatchClassifier", "AdshClassifier"]


class FixMatchClassifier(SemiSupervisedNet):
    """FixMatch: pseudo-labels of the weak view that pass a fixed confidence threshold.

    The core semi-supervised net with :class:`FixedThreshold` (threshold 0.95)
    as its masking policy: an unlabeled row is trained towards the class its
    weakly augmented view predicts with probability at least ``threshold``,
    through its strongly augmented view.

    %(ssl_sections)s

    See Also
    --------
    FreeMatchClassifier : Thresholds learned from the model's confidence.
    AdshClassifier : Per-class thresholds for class-imbalanced data.
    SemiSupervisedNet : The core net, for your own masking policy.
    SupervisedNetClassifier : The same default modules on the labeled rows only.

    References
    ----------
    %(reference_fixmatch)s

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from skssl.deep import FixMatchClassifier, FixedThreshold
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_semi = np.full(200, -1); y_semi[:10] = y[:10]
    >>> clf = FixMatchClassifier(masking=FixedThreshold(0.9), max_epochs=2,
    ...                          iterations_per_epoch=5, random_state=0)
    >>> clf
    FixMatchClassifier(iterations_per_epoch=5,
                       masking=FixedThreshold(threshold=0.9), max_epochs=2,
                       random_state=0)
    >>> clf.fit(X, y_semi).predict(X[:2]).shape
    (2,)
    """

    _default_masking = FixedThreshold


class FreeMatchClassifier(SemiSupervisedNet):
    """FreeMatch: self-adaptive thresholds and a fairness loss.

    The core semi-supervised net with :class:`SelfAdaptiveThreshold` as its
    masking policy (a global threshold that follows the model's mean
    confidence, scaled per class by the running class marginal) and its
    self-adaptive fairness loss weighted by ``fairness_weight`` (0.01, the
    paper's value for few labels). Tune the policy with ``masking__momentum``
    and ``masking__saf_sign``.

    %(ssl_sections)s

    See Also
    --------
    FixMatchClassifier : A fixed confidence threshold.
    AdshClassifier : Per-class thresholds for class-imbalanced data.
    SelfAdaptiveThreshold : The masking policy and its fairness loss.

    References
    ----------
    %(reference_freematch)s

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from skssl.deep import FreeMatchClassifier
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_semi = np.full(200, -1); y_semi[:10] = y[:10]
    >>> clf = FreeMatchClassifier(max_epochs=2, iterations_per_epoch=5, random_state=0)
    >>> clf.fit(X, y_semi).masking_.thresholds_.shape
    (2,)
    """

    _default_masking = SelfAdaptiveThreshold

    def __init__(self, module=None, *, fairness_weight=0.01, **kwargs):
        super().__init__(module, fairness_weight=fairness_weight, **kwargs)


class AdshClassifier(SemiSupervisedNet):
    """Adsh: class-adaptive thresholds for class-imbalanced data.

    The core semi-supervised net with :class:`ClassAdaptiveThreshold` as its
    masking policy: after every epoch each class gets the threshold at which it
    keeps the same fraction of its predicted unlabeled rows as the majority
    class keeps at ``threshold``, so that minority classes get pseudo-labels.
    ``mu=2`` is the paper's value.

    %(ssl_sections)s

    See Also
    --------
    FixMatchClassifier : One fixed threshold for every class.
    FreeMatchClassifier : Thresholds learned from the model's confidence.
    ClassAdaptiveThreshold : The masking policy.

    References
    ----------
    %(reference_adsh)s

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skssl.deep import AdshClassifier
    >>> X, y = make_blobs(300, centers=3, random_state=0)
    >>> y_semi = np.full(300, -1); y_semi[:30] = y[:30]
    >>> clf = AdshClassifier(max_epochs=2, iterations_per_epoch=5, random_state=0).fit(X, y_semi)
    >>> len(clf.history[-1, "thresholds"])
    3
    """

    _default_masking = ClassAdaptiveThreshold

    def __init__(self, module=None, *, mu=2, **kwargs):
        super().__init__(module, mu=mu, **kwargs)
