"""torch's intra-op thread count during a fit or a prediction (``n_jobs``).

:func:`torch_threads` is a reference-counted guard: the first fit in saves
the count and the last one out restores it.
Design decisions: user guide, Implementation decisions (deep), "Threads".
"""

import os
import threading
from contextlib import contextmanager

import torch

__all__ = ["torch_threads"]

_GUARD = threading.Lock()
_STATE = {"active": 0, "saved": None, "changed": False}


def resolve_n_threads(n_jobs):
    """Thread count for ``n_jobs`` as in scikit-learn (``-1``: all cores; ``None``: leave torch's)."""
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
                if _STATE["changed"]:
                    torch.set_num_threads(saved)
                _STATE.update(saved=None, changed=False)
            elif changed:
                torch.set_num_threads(saved)
