"""Augmentations: shapes, seeding, label-preserving defaults, replaceability."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from skssl.deep import (  # noqa: E402
    FixMatchClassifier,
    GaussianNoise,
    RandAugment,
    RandomShift,
    default_augmentations,
)


def test_gaussian_noise_is_relative_to_feature_scale_and_masks_to_mean():
    torch.manual_seed(0)
    X = torch.randn(2000, 2, dtype=torch.float64) * torch.tensor([1.0, 100.0], dtype=torch.float64) + 5
    aug = GaussianNoise(noise=0.1).fit(X)
    diff = aug(X) - X
    np.testing.assert_allclose(diff.std(0).numpy(), [0.1, 10.0], rtol=0.1)
    masked = GaussianNoise(noise=0.0, mask_prob=1.0).fit(X)(X)
    np.testing.assert_allclose(masked.numpy(), np.broadcast_to(X.mean(0).numpy(), X.shape))


def test_augmentations_are_reproducible_under_a_seed():
    X = torch.rand(8, 1, 12, 12)
    for aug in (RandomShift(), RandAugment(), GaussianNoise(0.3, 0.2)):
        torch.manual_seed(1)
        a = aug(X if not isinstance(aug, GaussianNoise) else X.flatten(1))
        torch.manual_seed(1)
        b = aug(X if not isinstance(aug, GaussianNoise) else X.flatten(1))
        assert torch.equal(a, b)


def test_random_shift_never_flips_by_default():
    # an asymmetric image: only shifts, no mirror image, come out when flip=False
    X = torch.zeros(64, 1, 8, 8)
    X[:, :, 3, 0:3] = 1.0  # a bar on the left edge
    torch.manual_seed(0)
    out = RandomShift(pad=0)(X)
    assert torch.equal(out, X)
    torch.manual_seed(0)
    flipped = RandomShift(pad=0, flip=True)(X)
    n_flipped = int((flipped[:, 0, 3, 7] == 1).sum())
    assert 0 < n_flipped < 64
    torch.manual_seed(0)
    shifted = RandomShift(pad=2)(X)
    # mass is preserved up to reflection at the border, and nothing lands on the far right
    assert torch.all(shifted[:, 0, :, 6:] == 0)


def test_rand_augment_keeps_shape_finite_values_and_changes_images():
    torch.manual_seed(0)
    X = torch.rand(32, 3, 16, 16) * 255
    out = RandAugment()(X)
    assert out.shape == X.shape and torch.all(torch.isfinite(out))
    assert not torch.equal(out, X)
    # a constant image stays finite (zero range)
    assert torch.all(torch.isfinite(RandAugment()(torch.ones(4, 1, 8, 8))))


def test_default_augmentations_by_dimensionality():
    weak, strong = default_augmentations(4)
    assert isinstance(weak, RandomShift) and not weak.flip and isinstance(strong, RandAugment)
    weak, strong = default_augmentations(2, n_features=2)
    assert strong.mask_prob == 0.0
    assert default_augmentations(2, n_features=64)[1].mask_prob > 0


def test_user_augmentation_is_used_and_not_mutated():
    calls = []

    class Identity:
        def __call__(self, X):
            calls.append(X.shape[0])
            return X

    X = np.random.default_rng(0).normal(size=(60, 3))
    y = np.full(60, -1)
    y[:6] = [0, 1, 0, 1, 0, 1]
    noise = GaussianNoise(0.2)
    FixMatchClassifier(
        weak_augment=Identity(),
        strong_augment=noise,
        max_epochs=1,
        iterations_per_epoch=2,
        batch_size=4,
        random_state=0,
    ).fit(X, y)
    assert calls  # the user's weak augmentation (a copy of it) ran
    assert not hasattr(noise, "scale_")  # the object passed in was not fitted in place
    with pytest.raises(ValueError, match="weak_augment"):
        FixMatchClassifier(weak_augment="flip", max_epochs=1).fit(X, y)


@pytest.mark.parametrize(
    "aug, param", [(GaussianNoise(noise=-1.0), "noise"), (GaussianNoise(mask_prob=1.5), "mask_prob")]
)
def test_bad_augmentation_parameters_name_the_parameter(aug, param):
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.full(30, -1)
    y[:4] = [0, 1, 0, 1]
    with pytest.raises(ValueError, match=f"'{param}' parameter of GaussianNoise"):
        FixMatchClassifier(strong_augment=aug, max_epochs=1, iterations_per_epoch=1, batch_size=4).fit(X, y)
