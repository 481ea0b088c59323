"""Data-parallel fits of the nets over several processes, through Hugging Face Accelerate.

A net given ``accelerator=Accelerator()`` and started as several processes
(``torchrun --nproc_per_node 2 script.py``, or ``accelerate launch`` on GPUs) trains one
model together: every process runs the same script and the same
``fit(X, y)`` on the same data, draws its own share of each step's batches,
and the gradients are averaged across the processes before every optimizer
step (PyTorch's ``DistributedDataParallel``, over the process group that
Accelerate sets up: gloo on CPUs, NCCL on GPUs). With one process the
accelerator changes nothing: the fit is the one-process fit, bit for bit.

What a step of ``k`` processes computes
    The step is the one-process step with the batch split: each process
    takes ``batch_size / k`` labeled rows and ``mu`` times as many unlabeled
    rows, from its own seeded streams (the fit's seed mixed with the process
    index), and the averaged gradient is that of the mean loss over the
    ``batch_size`` rows of all processes. The number of steps and the
    learning-rate schedule do not change, so ``k`` processes train the
    one-process model with other random draws, in about ``1 / k`` of the
    time per step. ``batch_size`` must be a multiple of ``k`` (else
    ``ValueError``): uneven shares would weight the processes' rows
    unequally.

What stays the same on every process
    * the weights: the wrapper broadcasts process 0's initial weights, and
      every process then applies the same averaged gradient;
    * BatchNorm statistics: process 0's are broadcast before every forward
      pass (``DistributedDataParallel``'s default) and again before each EMA
      step, so the EMA copies the same buffers everywhere;
    * the EMA weights (:mod:`skssl.deep._ema`), updated from those weights
      and buffers;
    * the masking policy (:mod:`skssl.deep._thresholds`): a policy updated
      per batch (FreeMatch's self-adaptive thresholds) is updated with the
      weak-view probabilities of the whole step, gathered from every
      process; a policy updated per epoch (Adsh) gets the probabilities of
      all unlabeled rows, each process computing an equal share. Every
      process then makes the same update. The pseudo-label mask of a row
      is computed where the row is.

Decisions
    * The wrapper is built by this module (``DistributedDataParallel`` with
      Accelerate's device), for the duration of one ``fit``, and removed
      after it, so a fitted net holds its plain module: it pickles, predicts
      without the other processes, and a later ``fit`` wraps afresh.
      ``Accelerator.prepare`` would keep a reference to every prepared
      model for the accelerator's lifetime, and a net fitted many times
      would pile up wrappers around the same weights.
    * Mixed precision and gradient accumulation of the accelerator are not
      applied; the nets' default modules are small and train in float32.
    * Only losses that are means over the step's rows are split exactly;
      FreeMatch's fairness term, a function of batch means, is computed per
      process on its share and averaged.
    * Each process records its own history (losses and mask rates of its
      share); with ``verbose`` only the main process prints.
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
