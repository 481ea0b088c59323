"""Weak and strong augmentations on torch batches (no torchvision).

An augmentation is any callable ``aug(X) -> X``; skssl's are parameter
objects that draw from a ``generator`` keyword and may define ``fit(X)``.
:class:`GaussianNoise` is for vectors, :class:`RandomShift` (FixMatch's weak
view) and :class:`RandAugment` (Cubuk et al., 2020, with cutout) for images.
"""

import math
from numbers import Integral, Real

import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval

__all__ = ["GaussianNoise", "RandomShift", "RandAugment", "default_augmentations"]


class GaussianNoise(BaseEstimator):
    """Relative Gaussian noise plus optional random feature masking for vectors.

    The default augmentation of 2-D ``X``; each feature's noise is scaled by
    its standard deviation in the training rows.

    Parameters
    ----------
    noise : float, default=0.05
        Standard deviation of the noise in units of each feature's standard
        deviation (learned by :meth:`fit`; 1 before it).
    mask_prob : float, default=0.0
        Probability that a feature is replaced by its training mean.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Per-feature mean of the training rows (set by :meth:`fit`).
    scale_ : ndarray of shape (n_features,)
        Per-feature standard deviation of the training rows, 1 where it is 0.

    See Also
    --------
    RandomShift : The weak augmentation of images.
    RandAugment : The strong augmentation of images.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import GaussianNoise
    >>> _ = torch.manual_seed(0)
    >>> aug = GaussianNoise(noise=0.3, mask_prob=0.2).fit(torch.randn(50, 3))
    >>> aug(torch.zeros(4, 3)).shape
    torch.Size([4, 3])
    >>> a = aug(torch.zeros(4, 3), generator=torch.Generator().manual_seed(1))
    >>> torch.equal(a, aug(torch.zeros(4, 3), generator=torch.Generator().manual_seed(1)))
    True
    """

    _parameter_constraints: dict = {
        "noise": [Interval(Real, 0, None, closed="left")],
        "mask_prob": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, noise=0.05, mask_prob=0.0):
        self.noise = noise
        self.mask_prob = mask_prob

    def fit(self, X):
        """Learn the per-feature mean and standard deviation of the training rows.

        Parameters
        ----------
        X : float tensor of shape (n_samples, n_features)
            Training rows.

        Returns
        -------
        self : object
            This augmentation, fitted.
        """
        X = torch.as_tensor(X).reshape(X.shape[0], -1)
        mean = X.mean(dim=0)
        scale = X.std(dim=0, unbiased=False) if X.shape[0] > 1 else torch.ones_like(mean)
        self.mean_ = mean.numpy()
        self.scale_ = torch.where(scale > 0, scale, torch.ones_like(scale)).numpy()
        return self

    def __call__(self, X, generator=None):
        fitted = hasattr(self, "scale_")
        scale = torch.as_tensor(self.scale_, device=X.device, dtype=X.dtype) if fitted else 1.0
        out = X + self.noise * scale * torch.randn_like(X, generator=generator)
        if self.mask_prob > 0:
            mean = torch.as_tensor(self.mean_, device=X.device, dtype=X.dtype).expand_as(X) if fitted else 0.0
            drop = torch.rand_like(X, generator=generator) < self.mask_prob
            out = torch.where(drop, mean, out)
        return out


def _image_range(X):
    flat = X.reshape(X.shape[0], -1)
    lo = flat.min(dim=1).values.view(-1, 1, 1, 1)
    hi = flat.max(dim=1).values.view(-1, 1, 1, 1)
    return lo, hi


class RandomShift(BaseEstimator):
    """Random translation by reflect-padding and cropping, optional horizontal flip.

    The default weak augmentation of images: pad by reflection, crop back at
    a random offset.

    Parameters
    ----------
    pad : float, default=0.125
        Largest shift: a fraction of the image side if < 1, else pixels.
    flip : bool, default=False
        Flip each image horizontally with probability 1/2 (changes the class
        of digits and text).

    See Also
    --------
    RandAugment : The strong augmentation of images.
    GaussianNoise : The augmentation of vectors.

    References
    ----------
    K. Sohn et al. "FixMatch: Simplifying Semi-Supervised Learning with
    Consistency and Confidence". NeurIPS 2020 (flip-and-shift weak view).

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import RandomShift
    >>> RandomShift()(torch.rand(3, 1, 8, 8)).shape
    torch.Size([3, 1, 8, 8])
    """

    _parameter_constraints: dict = {"pad": [Interval(Real, 0, None, closed="left")], "flip": ["boolean"]}

    def __init__(self, pad=0.125, flip=False):
        self.pad = pad
        self.flip = flip

    def __call__(self, X, generator=None):
        n, _, h, w = X.shape
        p = int(round(self.pad * min(h, w))) if self.pad < 1 else int(self.pad)
        out = X
        if self.flip:
            do = (torch.rand(n, generator=generator, device=X.device) < 0.5).view(-1, 1, 1, 1)
            out = torch.where(do, out.flip(-1), out)
        if p <= 0:
            return out
        # reflect padding needs pad < side; replicate covers tiny images
        mode = "reflect" if p < min(h, w) else "replicate"
        padded = F.pad(out, (p, p, p, p), mode=mode)
        dy = torch.randint(0, 2 * p + 1, (n,), generator=generator, device=X.device)
        dx = torch.randint(0, 2 * p + 1, (n,), generator=generator, device=X.device)
        rows = (dy[:, None] + torch.arange(h, device=X.device)).view(n, 1, h, 1)
        cols = (dx[:, None] + torch.arange(w, device=X.device)).view(n, 1, 1, w)
        idx_n = torch.arange(n, device=X.device).view(n, 1, 1, 1)
        idx_c = torch.arange(X.shape[1], device=X.device).view(1, -1, 1, 1)
        return padded[idx_n, idx_c, rows, cols]


_GEOMETRIC = ("rotate", "shear_x", "shear_y", "translate_x", "translate_y")
_PHOTOMETRIC = ("identity", "brightness", "contrast", "solarize", "posterize", "autocontrast")


class RandAugment(BaseEstimator):
    """RandAugment-style strong augmentation for images, with cutout.

    The default strong augmentation of images: ``n_ops`` random ops relative
    to each image's own range, then a random cutout square.

    Parameters
    ----------
    n_ops : int, default=2
        Number of random ops applied to each image.
    max_rotate : float, default=30.0
        Largest rotation in degrees.
    max_shear : float, default=0.3
        Largest shear factor.
    max_translate : float, default=0.3
        Largest translation as a fraction of the image side.
    cutout : float, default=0.5
        Largest cutout side as a fraction of the image side (0: none).

    See Also
    --------
    RandomShift : The weak augmentation of images.
    GaussianNoise : The augmentation of vectors.

    References
    ----------
    E. D. Cubuk, B. Zoph, J. Shlens and Q. V. Le. "RandAugment: Practical
    Automated Data Augmentation with a Reduced Search Space". CVPR Workshops
    2020. T. DeVries and G. W. Taylor. "Improved Regularization of
    Convolutional Neural Networks with Cutout". arXiv:1708.04552, 2017.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep import RandAugment
    >>> RandAugment()(torch.rand(3, 1, 8, 8)).shape
    torch.Size([3, 1, 8, 8])
    """

    ops = _GEOMETRIC + _PHOTOMETRIC

    _parameter_constraints: dict = {
        "n_ops": [Interval(Integral, 0, None, closed="left")],
        "max_rotate": [Interval(Real, 0, None, closed="left")],
        "max_shear": [Interval(Real, 0, None, closed="left")],
        "max_translate": [Interval(Real, 0, None, closed="left")],
        "cutout": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, n_ops=2, max_rotate=30.0, max_shear=0.3, max_translate=0.3, cutout=0.5):
        self.n_ops = n_ops
        self.max_rotate = max_rotate
        self.max_shear = max_shear
        self.max_translate = max_translate
        self.cutout = cutout

    def _geometric(self, X, op, mag, sign):
        n = X.shape[0]
        theta = torch.zeros(n, 2, 3, device=X.device, dtype=X.dtype)
        theta[:, 0, 0] = 1.0
        theta[:, 1, 1] = 1.0
        s = sign * mag
        angle = torch.where(op == 0, s * math.radians(self.max_rotate), torch.zeros_like(s))
        cos, sin = torch.cos(angle), torch.sin(angle)
        theta[:, 0, 0], theta[:, 0, 1] = cos, -sin
        theta[:, 1, 0], theta[:, 1, 1] = sin, cos
        theta[:, 0, 1] += torch.where(op == 1, s * self.max_shear, torch.zeros_like(s))
        theta[:, 1, 0] += torch.where(op == 2, s * self.max_shear, torch.zeros_like(s))
        # affine_grid works in [-1, 1] coordinates: a shift of f of the side is 2 f
        theta[:, 0, 2] = torch.where(op == 3, 2 * s * self.max_translate, torch.zeros_like(s))
        theta[:, 1, 2] = torch.where(op == 4, 2 * s * self.max_translate, torch.zeros_like(s))
        lo, _ = _image_range(X)
        grid = F.affine_grid(theta, list(X.shape), align_corners=False)
        # shift so that the zero padding of grid_sample fills with the image minimum
        return F.grid_sample(X - lo, grid, mode="bilinear", padding_mode="zeros", align_corners=False) + lo

    def _photometric(self, X, op, mag, sign):
        lo, hi = _image_range(X)
        span = (hi - lo).clamp_min(1e-12)
        m = mag.view(-1, 1, 1, 1)
        sg = sign.view(-1, 1, 1, 1)
        mean = X.mean(dim=(1, 2, 3), keepdim=True)
        outs = {
            "identity": X,
            "brightness": X + sg * 0.5 * m * span,
            "contrast": (X - mean) * (1 + sg * 0.9 * m) + mean,
            "solarize": torch.where(X >= hi - m * span, hi + lo - X, X),
            "posterize": lo + torch.floor((X - lo) / span * (2 + (1 - m) * 14)) / (2 + (1 - m) * 14) * span,
            "autocontrast": (X - lo) / span,
        }
        out = X
        for j, name in enumerate(_PHOTOMETRIC):
            sel = (op == j).view(-1, 1, 1, 1)
            out = torch.where(sel, outs[name], out)
        return out

    def _cutout(self, X, generator):
        n, _, h, w = X.shape
        side = torch.rand(n, generator=generator, device=X.device) * self.cutout
        sh = (side * h).round().long()
        sw = (side * w).round().long()
        cy = torch.randint(0, h, (n,), generator=generator, device=X.device)
        cx = torch.randint(0, w, (n,), generator=generator, device=X.device)
        ys = torch.arange(h, device=X.device).view(1, h, 1)
        xs = torch.arange(w, device=X.device).view(1, 1, w)
        inside = (
            (ys >= (cy - sh // 2).view(-1, 1, 1))
            & (ys < (cy - sh // 2 + sh).view(-1, 1, 1))
            & (xs >= (cx - sw // 2).view(-1, 1, 1))
            & (xs < (cx - sw // 2 + sw).view(-1, 1, 1))
        ).unsqueeze(1)
        fill = X.mean(dim=(1, 2, 3), keepdim=True).expand_as(X)
        return torch.where(inside, fill, X)

    def __call__(self, X, generator=None):
        n = X.shape[0]
        out = X
        n_geo = len(_GEOMETRIC)
        for _ in range(int(self.n_ops)):
            op = torch.randint(0, len(self.ops), (n,), generator=generator, device=X.device)
            mag = torch.rand(n, generator=generator, device=X.device, dtype=X.dtype)
            sign = torch.where(torch.rand(n, generator=generator, device=X.device) < 0.5, -1.0, 1.0).to(X.dtype)
            is_geo = op < n_geo
            if bool(is_geo.any()):
                geo = self._geometric(out, torch.where(is_geo, op, -1), mag, sign)
                out = torch.where(is_geo.view(-1, 1, 1, 1), geo, out)
            if bool((~is_geo).any()):
                out = self._photometric(out, torch.where(is_geo, -1, op - n_geo), mag, sign)
        if self.cutout > 0:
            out = self._cutout(out, generator)
        return out


def default_augmentations(ndim, n_features=None):
    """Return the default ``(weak, strong)`` augmentations for ``X.ndim``.

    Parameters
    ----------
    ndim : int
        2 for vectors, 4 for images.
    n_features : int, default=None
        Number of features of 2-D input; the strong view masks features from
        8 features on.

    Returns
    -------
    weak, strong : callable
        The weak and the strong augmentation.
    """
    if ndim == 4:
        return RandomShift(), RandAugment()
    mask_prob = 0.3 if n_features is not None and n_features >= 8 else 0.0
    return GaussianNoise(noise=0.05), GaussianNoise(noise=0.3, mask_prob=mask_prob)
