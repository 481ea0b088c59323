"""Seeded endless index streams for the labeled and unlabeled batches.

A semi-supervised epoch is a fixed number of steps, not one pass over the
(few) labeled rows, so both the labeled and the unlabeled rows are drawn from
an endless stream of seeded permutations: every row is seen once before any
row is seen twice, and consecutive epochs continue where the last one stopped.
torch's ``RandomSampler(replacement=False, num_samples=k)`` restarts its
permutation at every epoch, hence this small sampler with its own numpy
generator, seeded from the fit's seed.
"""

import numpy as np
from torch.utils.data import Sampler

__all__ = ["EndlessSampler"]


class EndlessSampler(Sampler):
    """Indices from an endless stream of seeded permutations of ``range(n)``.

    Parameters
    ----------
    n : int
        Number of rows to draw from.
    num_samples : int
        Number of indices one ``__iter__`` yields (one epoch of a DataLoader).
    seed : int
        Seed of the stream's numpy generator.
    """

    def __init__(self, n, num_samples, seed):
        self.n = int(n)
        self.num_samples = int(num_samples)
        self._rng = np.random.default_rng(seed)
        self._buffer = np.empty(0, dtype=np.int64)

    def take(self, k):
        """Return the next ``k`` indices of the stream."""
        while self._buffer.shape[0] < k:
            self._buffer = np.concatenate([self._buffer, self._rng.permutation(self.n)])
        out, self._buffer = self._buffer[:k], self._buffer[k:]
        return out

    def __iter__(self):
        return iter(self.take(self.num_samples).tolist())

    def __len__(self):
        return self.num_samples
