"""How many threads torch uses inside a fit or a prediction.

torch runs every operator on an intra-op thread pool (OpenMP in the CPU
wheels) sized to the number of cores. On the small batches and 28x28 maps of
the default nets, that pool costs more than it gives: the workers of each
operator wait for each other at a barrier, and while they wait they spin.
Measured on a 2-core machine shared with other jobs, one default FixMatch step
took 68-80 ms of CPU with one thread and 408-673 ms with torch's default of
two (wall time 0.15 s vs 0.9-2.0 s per step); see
``benchmarks/results/deep_time.md``. The pool also changes the order of
floating-point reductions, so the same ``random_state`` trains a different
net on machines with a different number of cores.

The nets therefore run with ``n_jobs`` intra-op threads (1 by default) for
the duration of ``fit``/``partial_fit``/``predict_proba`` and restore the
caller's setting afterwards. scikit-learn's own answer, ``threadpoolctl``,
limits BLAS and OpenMP pools it can find by their shared libraries, but
torch keeps its own thread count (``torch.set_num_threads``), so this small
context manager sets it directly. joblib's worker processes (``GridSearchCV(n_jobs=2)``)
already start torch with ``cpu_count // n_jobs`` threads through
``OMP_NUM_THREADS``; with ``n_jobs=1`` on the net, a fit gives the same
model in the parent process and in any worker.
"""

import os
from contextlib import contextmanager

import torch

__all__ = ["torch_threads"]


def resolve_n_threads(n_jobs):
    """Number of torch intra-op threads for ``n_jobs`` (``None``: leave torch's setting).

    Parameters
    ----------
    n_jobs : int or None
        A positive count; ``-1`` for every core (``os.cpu_count()``), ``-2``
        for all but one and so on, as in scikit-learn; ``None`` keeps the
        current ``torch.get_num_threads()``.

    Returns
    -------
    n_threads : int or None
    """
    if n_jobs is None:
        return None
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use a positive count, -1 for all cores, or None.")
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


@contextmanager
def torch_threads(n_jobs):
    """Run the body with ``n_jobs`` torch intra-op threads, then restore the previous count.

    Parameters
    ----------
    n_jobs : int or None
        See :func:`resolve_n_threads`.

    Examples
    --------
    >>> import torch
    >>> from skssl.deep._threads import torch_threads
    >>> before = torch.get_num_threads()
    >>> with torch_threads(1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    n = resolve_n_threads(n_jobs)
    before = torch.get_num_threads()
    # touch torch's global setting only when the count changes
    changed = n is not None and n != before
    if changed:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if changed:
            torch.set_num_threads(before)
