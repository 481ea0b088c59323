"""How many threads torch uses inside a fit or a prediction.

The nets run torch with ``n_jobs`` intra-op threads (1 by default) for the
duration of ``fit``, ``partial_fit`` and ``predict_proba``, and restore the
caller's setting afterwards (``threadpoolctl`` does not reach torch's own
count). :func:`torch_threads` is one reference-counted guard for the
process, under a lock: the first fit to enter saves the count, every fit
sets its own thread to its ``n_jobs``, and the last one to leave restores
the saved count, so overlapping fits in threads do not leave another fit's
count behind.

Design decisions: user guide, Implementation decisions (deep, self-training), "Threads".
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
