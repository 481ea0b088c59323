"""Seeded endless index streams for the labeled and unlabeled batches.

Every row is seen once before any row is seen twice, across epochs.
Design decisions: user guide, Implementation decisions (deep), "Defaults sized for a CPU".
"""

import numpy as np
from torch.utils.data import Sampler

__all__ = ["EndlessSampler"]


class EndlessSampler(Sampler):
    """Indices from an endless stream of seeded permutations of ``range(n)``, ``num_samples`` per epoch."""

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
