"""Where the random numbers of a fit come from: its own generators, never torch's global one.

A fit draws random numbers for the weight initialisation, the order of the
labeled and unlabeled rows, the augmentations and the data loaders' base seeds.
torch's global generator (``torch.manual_seed``) is one per process, shared by
every thread: two fits that seed it and draw from it at the same time interleave
their draws, so neither is repeatable, and saving and restoring it around a fit
(``torch.random.fork_rng``) in the order A saves, B saves, A restores,
B restores leaves the process with A's seeded state. So every fit owns its
random streams (:class:`FitRandomness`), all seeded from ``random_state``:

* the weights of the default modules (:class:`~skssl.deep.MLPModule`,
  :class:`~skssl.deep.SmallCNN`) are built on torch's ``meta`` device, which
  draws nothing, then filled by their ``reset_parameters(generator)`` with
  torch's default initialisation drawn from the fit's generator;
* the row orders come from the samplers' own numpy generators
  (:mod:`skssl.deep._samplers`);
* skssl's augmentations take a ``generator`` keyword, which the net passes;
* the data loaders get a ``generator`` (their base seed is drawn from it);
* predictions draw nothing from the global generator either (their loader gets
  a fresh generator of its own).

Decision: a process-wide lock for draws that cannot take a generator. A user
module class is built by its own ``__init__``, a user module may draw in its
``forward`` (``nn.Dropout``, ``F.dropout``, noise layers) and a user
augmentation without a ``generator`` parameter draws from the global generator;
no generator can be handed to them, and replacing ``nn.Dropout`` layers would
still miss the functional calls. Each such call (building a user module, every
forward pass of a user module during the fit, every call of such an
augmentation) therefore runs under one process-wide lock, with the global
generator saved, seeded from the fit's own generator, and restored before the
lock is released (:meth:`FitRandomness.global_section`). Overlapping fits then
take turns for those calls only, and each fit still sees the same numbers. The
default modules and skssl's augmentations never take the lock. A thread that
draws from the global generator *outside* skssl while such a call runs can
observe the temporary seed; fits with the default modules cannot.

Decision: ``random_state=None`` follows scikit-learn's glossary: the fit's seed
is one draw from numpy's global ``RandomState``, so ``np.random.seed`` makes
such fits repeatable, as it does for scikit-learn's estimators. An int or a
``RandomState`` leaves numpy's global state alone.
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
