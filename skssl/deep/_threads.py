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

Fits in threads (one guard for the process)
    ``torch.set_num_threads`` does two things. In torch's OpenMP builds (the
    CPU wheels), it sets the pool size of the *calling* thread, which is what
    that thread's operators use and what ``torch.get_num_threads()`` reports
    there; and it sets the process-wide count that a thread starts with when
    it first runs a parallel operator. A save/restore per fit gets the second
    wrong when fits overlap: in the order A saves, B saves (already A's
    count), A restores, B restores, the process keeps A's count. So
    :func:`torch_threads` is one reference-counted guard for the process,
    under a lock: the first fit to enter saves the count of its thread (the
    process's setting, as no fit is running), every fit sets its own thread
    to its ``n_jobs``, a fit that leaves while others still run puts its
    thread back to the saved count, and the last one to leave puts back the
    saved count, for its thread and for the process. A single fit thus
    restores exactly the caller's count.

    Decision, what a concurrent fit with a different ``n_jobs`` gets: in the
    OpenMP builds, its own ``n_jobs``, because the pool size is kept per
    thread; overlapping fits with different ``n_jobs`` each stay repeatable.
    torch builds with the native thread pool share one pool per process;
    there a fit runs with the count of whichever fit set it last (the result
    is correct, but the summation order, hence the last bits of the weights,
    can then differ from a fit run alone). A thread that ran a fit while
    others overlapped it ends with the saved count, not a count it may have
    set itself before.
"""

import os
import threading
from contextlib import contextmanager

import torch

__all__ = ["torch_threads"]

_GUARD = threading.Lock()
#: the guard's state: fits inside, the count saved by the first of them, whether any fit changed a count
_STATE = {"active": 0, "saved": None, "changed": False}


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

    One reference-counted guard for the process (see the module docstring):
    when several threads are inside at once, the count saved by the first is
    restored by each as it leaves, and the last restores the process's.

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
    with _GUARD:
        if _STATE["active"] == 0:
            _STATE["saved"] = torch.get_num_threads()
        _STATE["active"] += 1
        # touch torch's setting only when this thread's count changes
        changed = n is not None and n != torch.get_num_threads()
        if changed:
            torch.set_num_threads(n)
            _STATE["changed"] = True
    try:
        yield
    finally:
        with _GUARD:
            _STATE["active"] -= 1
            saved = _STATE["saved"]
            if _STATE["active"] == 0:
                # the last to leave puts the process's count back (and its thread's)
                if _STATE["changed"]:
                    torch.set_num_threads(saved)
                _STATE.update(saved=None, changed=False)
            elif changed:
                torch.set_num_threads(saved)
