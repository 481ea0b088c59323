"""Where the random numbers of a fit come from: its own generators, never torch's global one.

Every fit owns its random streams (:class:`FitRandomness`), all seeded from
``random_state``: the default modules' weights, the samplers' row orders
(:mod:`skssl.deep._samplers`), skssl's augmentations (a ``generator``
keyword) and the data loaders. Fits running at once in threads then give
the nets they give alone, and torch's global generator is left as it was.
Calls that can only draw from the global generator (a user module's
construction and forward pass, an augmentation without ``generator``) run
under one process-wide lock with the global generator seeded from the fit
and restored (:meth:`FitRandomness.global_section`). ``random_state=None``
takes the seed from numpy's global ``RandomState``.

Design decisions: user guide, Implementation decisions (deep, self-training), "Random numbers".
"""

import inspect
import threading
from contextlib import contextmanager

import numpy as np
import torch
from sklearn.utils import check_random_state

__all__ = ["FitRandomness", "check_device", "seed_from", "takes_generator"]

#: serialises the calls that can only draw from torch's global generator (module docstring)
_GLOBAL_RNG_LOCK = threading.RLock()


def seed_from(random_state):
    """The int seed of a fit: one draw from ``check_random_state(random_state)``.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        As in scikit-learn; ``None`` draws from numpy's global ``RandomState``.

    Returns
    -------
    seed : int
        In ``[0, 2**31 - 1)``.
    """
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def takes_generator(fn):
    """Whether ``fn`` can be called as ``fn(X, generator=g)`` (a parameter named ``generator``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return "generator" in params


def check_device(device):
    """``device`` as a ``torch.device``; a CUDA device must exist on this machine.

    Parameters
    ----------
    device : str, torch.device or None
        The net's ``device`` (``None`` is the CPU).

    Returns
    -------
    device : torch.device
        The checked device.

    Raises
    ------
    ValueError
        When ``device`` is not a device name, or names a CUDA device that this
        torch build or this machine does not have (torch's own error would be
        about a CUDA library the dynamic linker did not load).
    """
    try:
        checked = torch.device("cpu" if device is None else device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a torch device: {exc}") from exc
    if checked.type != "cuda":
        return checked
    if not torch.cuda.is_available():
        why = (
            "this torch build has no CUDA support (torch.version.cuda is None)"
            if torch.version.cuda is None
            else f"this torch build supports CUDA {torch.version.cuda} but finds no usable GPU on this machine"
        )
        raise ValueError(
            f"device={device!r} asks for CUDA, but CUDA is not available: {why}. Use device='cpu', or "
            "install a CUDA build of torch on a machine with an NVIDIA GPU and its driver."
        )
    count = torch.cuda.device_count()
    if checked.index is not None and checked.index >= count:
        raise ValueError(f"device={device!r} names CUDA device {checked.index}, but this machine has {count}.")
    return checked


class FitRandomness:
    """The random streams of one fit, all seeded from the fit's seed.

    Parameters
    ----------
    seed : int
        The fit's seed (:func:`seed_from`).
    device : str, torch.device or None
        Device of the batches; the augmentations' generator lives there.

    Attributes
    ----------
    init : torch.Generator
        CPU generator of the weight initialisation.
    augment : torch.Generator
        Generator of the augmentations, on ``device``.
    """

    def __init__(self, seed, device="cpu"):
        self.device = check_device(device)
        self.init = torch.Generator("cpu").manual_seed(int(seed))
        self.augment = torch.Generator(self.device).manual_seed(int(seed) + 3)
        # seeds of the data loaders and of the global-generator sections
        self._seeds = np.random.default_rng(int(seed) + 4)
        self._takes_generator = {}  # id(augmentation) -> bool, for the fit's lifetime

    def _next_seed(self):
        return int(self._seeds.integers(np.iinfo(np.int64).max))

    def loader_generator(self):
        """A CPU generator for one data loader, seeded from this fit's stream."""
        return torch.Generator("cpu").manual_seed(self._next_seed())

    def augment_batch(self, aug, X):
        """``aug(X)``, drawing from this fit's augmentation generator.

        Parameters
        ----------
        aug : callable
            An augmentation: ``aug(X, generator=g)`` when it takes a
            ``generator``, else ``aug(X)`` inside :meth:`global_section`.
        X : tensor
            A batch.

        Returns
        -------
        X_aug : tensor
            The augmented batch.
        """
        takes = self._takes_generator.get(id(aug))
        if takes is None:
            takes = self._takes_generator[id(aug)] = takes_generator(aug)
        if takes:
            return aug(X, generator=self.augment)
        with self.global_section():
            return aug(X)

    @contextmanager
    def global_section(self):
        """Run the body with torch's global generator to itself, seeded from this fit.

        Takes the process-wide lock, saves the global generator (and the CUDA
        ones for a CUDA fit), seeds it from this fit's stream, and restores it
        before the lock is released (see the module docstring).
        """
        seed = self._next_seed()
        cuda = self.device.type == "cuda"
        with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=None if cuda else []):
            if cuda:
                torch.manual_seed(seed)
            else:
                torch.random.default_generator.manual_seed(seed)
            yield
