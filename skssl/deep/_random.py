"""The random streams of a fit (:class:`FitRandomness`), seeded from ``random_state``.

Calls that can only draw from torch's global generator run under a
process-wide lock with that generator seeded from the fit and restored.
Design decisions: user guide, Implementation decisions (deep), "Random numbers".
"""

import inspect
import threading
from contextlib import contextmanager

import numpy as np
import torch
from sklearn.utils import check_random_state

__all__ = ["FitRandomness", "check_device", "seed_from", "takes_generator"]

_GLOBAL_RNG_LOCK = threading.RLock()


def seed_from(random_state):
    """The int seed of a fit: one draw from ``check_random_state(random_state)``."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def takes_generator(fn):
    """Whether ``fn`` takes a ``generator`` parameter."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return "generator" in params


def check_device(device):
    """``device`` as a ``torch.device``; raise a clear ``ValueError`` for a CUDA device this machine lacks."""
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
    """The random streams of one fit: ``init`` (weights, CPU), ``augment`` (on ``device``) and seeds."""

    def __init__(self, seed, device="cpu"):
        self.device = check_device(device)
        self.init = torch.Generator("cpu").manual_seed(int(seed))
        self.augment = torch.Generator(self.device).manual_seed(int(seed) + 3)
        self._seeds = np.random.default_rng(int(seed) + 4)
        self._takes_generator = {}  # id(augmentation) -> bool

    def _next_seed(self):
        return int(self._seeds.integers(np.iinfo(np.int64).max))

    def loader_generator(self):
        """A CPU generator for one data loader, seeded from this fit's stream."""
        return torch.Generator("cpu").manual_seed(self._next_seed())

    def augment_batch(self, aug, X):
        """``aug(X)`` with this fit's augmentation generator (else inside :meth:`global_section`)."""
        takes = self._takes_generator.get(id(aug))
        if takes is None:
            takes = self._takes_generator[id(aug)] = takes_generator(aug)
        if takes:
            return aug(X, generator=self.augment)
        with self.global_section():
            return aug(X)

    @contextmanager
    def global_section(self):
        """Run the body under the lock with torch's global generator seeded from this fit, then restored."""
        seed = self._next_seed()
        cuda = self.device.type == "cuda"
        with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=None if cuda else []):
            if cuda:
                torch.manual_seed(seed)
            else:
                torch.random.default_generator.manual_seed(seed)
            yield
