"""FixMatch, FreeMatch and Adsh: the core net with each paper's policy and defaults."""

from numbers import Real

import torch
from sklearn.utils._param_validation import Interval

from ._core import SemiSupervisedNet
from ._thresholds import ClassAdaptiveThreshold, FixedThreshold, SelfAdaptiveThreshold

__all__ = ["FixMatchClassifier", "FreeMatchClassifier", "AdshClassifier"]


class FixMatchClassifier(SemiSupervisedNet):
    """FixMatch: pseudo-labels of the weak view that pass a fixed confidence threshold.

    The core net with :class:`FixedThreshold`: a row's strong view is trained
    towards the class its weak view predicts with probability >= ``threshold``.

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

    The core net with :class:`SelfAdaptiveThreshold` and its fairness loss,
    weighted by ``fairness_weight``, added to the unlabeled loss.

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
    _added_parameters_doc = """\
fairness_weight : float, default={fairness_weight}
    Weight of the policy's ``fairness_loss`` (FreeMatch's lambda_f), >= 0;
    unused with a policy that has none."""

    _parameter_constraints: dict = {
        **SemiSupervisedNet._parameter_constraints,
        "fairness_weight": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, module=None, *, fairness_weight=0.01, **kwargs):
        super().__init__(module, **kwargs)
        self.fairness_weight = fairness_weight

    def unlabeled_loss(self, logits_strong, probs_weak, mask, pseudo_labels):
        loss = super().unlabeled_loss(logits_strong, probs_weak, mask, pseudo_labels)
        fairness_loss = getattr(self.masking_, "fairness_loss", None)
        if self.fairness_weight > 0 and fairness_loss is not None:
            loss_f = fairness_loss(torch.softmax(logits_strong.float(), dim=1), mask)
            loss = loss + self.fairness_weight * loss_f
            self.history.record_batch("loss_f", loss_f.item())
        return loss


class AdshClassifier(SemiSupervisedNet):
    """Adsh: class-adaptive thresholds for class-imbalanced data.

    The core net with :class:`ClassAdaptiveThreshold`, so that minority
    classes get pseudo-labels; ``mu=2`` is the paper's value.

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
