"""Data-parallel fits of the nets over several processes, through Hugging Face Accelerate.

A net given ``accelerator=Accelerator()`` and started as several processes
(``torchrun --nproc_per_node 2 script.py`` or ``accelerate launch``) trains
one model together: every process runs the same ``fit(X, y)``, draws its own
share of each step's batches (``batch_size / k`` labeled rows, from streams
seeded by the fit's seed and the process index), and the gradients are
averaged before every optimizer step (``DistributedDataParallel`` over
Accelerate's process group). Initial weights and BatchNorm statistics are
broadcast from process 0, and the masking policy is updated with the
probabilities of every process, so weights, EMA and policy are the same
everywhere. With one process the fit is the one-process fit, bit for bit.

Design decisions: user guide, Implementation decisions (deep, self-training), "Data-parallel fits".
"""

import zlib

import numpy as np
import torch

__all__ = ["ParallelFit", "no_parallel"]


class _OneProcess:
    """The one-process case: every hook is the identity (the default path, untouched)."""

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
    """The collective operations of one fit over ``accelerator.num_processes`` processes.

    Parameters
    ----------
    accelerator : accelerate.Accelerator
        The accelerator of the processes (its process group and device).
    """

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
        """Raise ``ValueError`` on every process unless all of them were given the same rows and labels.

        Compares the shape of ``X`` and a checksum of the encoded labels (``X``
        itself is not hashed: it may be large); a mismatch would otherwise
        stall the processes at their first exchange of unequal batches.
        """
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
