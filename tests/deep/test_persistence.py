"""Saving fitted deep nets with skops: no bare torch tensors, and the types a user must trust."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("skorch")
sio = pytest.importorskip("skops.io")

from sklearn.datasets import make_blobs  # noqa: E402

from skssl.deep import AdshClassifier, FixMatchClassifier, FreeMatchClassifier  # noqa: E402

#: What ``skops.io.get_untrusted_types`` lists for a fitted net besides its own class and policy:
#: skorch's callbacks and history, the torch classes given as parameters, and one augmentation.
#: The module, optimizer and EMA weights are inside skorch's own ``torch.save`` blob (bytes).
TRUSTED_FOR_EVERY_NET = {
    "builtins.print",
    "functools.partial",
    "skorch.callbacks.logging.EpochTimer",
    "skssl.deep._progress.ProgressLog",
    "skorch.callbacks.scoring.EpochScoring",
    "skorch.callbacks.scoring.PassthroughScoring",
    "skorch.history.History",
    "skorch.setter.optimizer_setter",
    "skorch.utils._indexing_other",
    "skorch.utils.to_numpy",
    "skssl.deep._augment.GaussianNoise",
    "skssl.deep._base._encoded_accuracy",
    "torch.nn.modules.loss.CrossEntropyLoss",
    "torch.optim.adam.Adam",
    "torch.utils.data.dataloader.DataLoader",
}


@pytest.mark.parametrize(
    "Est, policy",
    [
        (FixMatchClassifier, "FixedThreshold"),
        (FreeMatchClassifier, "SelfAdaptiveThreshold"),
        (AdshClassifier, "ClassAdaptiveThreshold"),
    ],
)
def test_skops_round_trip(Est, policy):
    X, y = make_blobs(60, centers=3, random_state=0)
    y_semi = np.full(60, -1)
    y_semi[:9] = y[:9]
    est = Est(max_epochs=1, iterations_per_epoch=2, batch_size=4, module__hidden_units=8, random_state=0)
    est.fit(X, y_semi)
    data = sio.dumps(est)
    untrusted = set(sio.get_untrusted_types(data=data))
    assert untrusted == TRUSTED_FOR_EVERY_NET | {
        f"skssl.deep._classifiers.{Est.__name__}",
        f"skssl.deep._thresholds.{policy}",
    }
    again = sio.loads(data, trusted=sorted(untrusted))
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(again.masking_.thresholds_, est.masking_.thresholds_)
    assert isinstance(again.masking_.thresholds_, np.ndarray)
