"""Data-parallel fits of the nets over several processes, through Hugging Face Accelerate.

Every process runs the same ``fit(X, y)`` on its share of each batch and
the gradients are averaged (``DistributedDataParallel``); process 0's weights
are broadcast, so weights, EMA and policy agree everywhere.
Design decisions: user guide, Implementation decisions (deep), "Data-parallel fits".
"""

import zlib

import numpy as np
import torch

__all__ = ["ParallelFit", "no_parallel"]


class _OneProcess:
    """The one-process case: every hook is the identity."""

    active = False
    world_size = 1
    rank = 0

    def stream_seed(self, seed):
        return seed

    def local_batch_size(self, batch_size):
        return batch_size

    def gather_rows(self, tensor):
        return tensor

    def unlabeled_share(self, n_rows):
        return slice(None)

    def gather_share(self, tensor, n_rows):
        return tensor

    def sync_buffers(self, module):
        pass


no_parallel = _OneProcess()


class ParallelFit(_OneProcess):
    """The collective operations of one fit over ``accelerator.num_processes`` processes."""

    active = True

    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.world_size = int(accelerator.num_processes)
        self.rank = int(accelerator.process_index)

    @classmethod
    def for_net(cls, accelerator):
        """The fit's parallel context: :data:`no_parallel` without an accelerator or with one process."""
        if accelerator is None or int(accelerator.num_processes) <= 1:
            return no_parallel
        return cls(accelerator)

    def stream_seed(self, seed):
        """The seed of this process's random streams: ``seed`` mixed with the process index."""
        return int(np.random.SeedSequence([int(seed), self.rank]).generate_state(1)[0] % np.iinfo(np.int32).max)

    def local_batch_size(self, batch_size):
        """This process's share of ``batch_size`` labeled rows."""
        if batch_size % self.world_size:
            raise ValueError(
                f"batch_size={batch_size} does not split evenly over {self.world_size} processes; "
                "use a multiple of the number of processes."
            )
        return batch_size // self.world_size

    def check_same_data(self, X, y_enc):
        """Raise unless every process got the same shape of ``X`` and labels (else they would stall)."""
        mine = torch.tensor([*X.shape[:2], zlib.crc32(np.ascontiguousarray(y_enc, dtype=np.int64).tobytes())])
        every = self.gather_rows(mine.reshape(1, -1))
        if not bool((every == every[0]).all()):
            raise ValueError(
                "The processes of a data-parallel fit must all call fit with the same X and y; got "
                f"(n_samples, n_features, label checksum) = {every.tolist()} on processes 0..{self.world_size - 1}."
            )

    def wrap(self, module):
        """``module`` in ``DistributedDataParallel`` (process 0's weights and buffers broadcast)."""
        device = self.accelerator.device
        device_ids = [device] if device.type == "cuda" else None
        return torch.nn.parallel.DistributedDataParallel(module, device_ids=device_ids)

    def broadcast_module(self, module):
        """Overwrite ``module``'s weights and buffers with process 0's."""
        with torch.no_grad():
            for tensor in [*module.parameters(), *module.buffers()]:
                torch.distributed.broadcast(tensor.data, src=0)

    def sync_buffers(self, module):
        """Overwrite ``module``'s buffers (BatchNorm statistics) with process 0's."""
        with torch.no_grad():
            for buffer in module.buffers():
                torch.distributed.broadcast(buffer.data, src=0)

    def gather_rows(self, tensor):
        """The rows of every process's ``tensor``, in process order (equal row counts)."""
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)]
        torch.distributed.all_gather(parts, tensor.contiguous())
        return torch.cat(parts)

    def unlabeled_share(self, n_rows):
        """This process's equal share of ``n_rows`` rows: rows ``rank, rank + k, ...``."""
        return slice(self.rank, n_rows, self.world_size)

    def gather_share(self, tensor, n_rows):
        """Rebuild the ``n_rows`` rows from every process's :meth:`unlabeled_share` of them."""
        per_process = -(-n_rows // self.world_size)
        padded = tensor.new_zeros((per_process, *tensor.shape[1:]))
        padded[: tensor.shape[0]] = tensor
        stacked = self.gather_rows(padded).reshape(self.world_size, per_process, *tensor.shape[1:])
        # row i came from process i % k, at position i // k of its share
        order = torch.arange(n_rows, device=tensor.device)
        return stacked[order % self.world_size, order // self.world_size]
