"""One BLAS thread inside the linear solvers.

The solvers' hot loops make thousands of small BLAS calls: every 1-D ``a @ b``
in CGLS, the objective and the line search is an OpenBLAS ``ddot``. With
OpenBLAS's default pool (one thread per core) each of those calls wakes the
pool; on a busy machine a call on 11,314-long vectors took milliseconds
instead of microseconds, and a 20 Newsgroups TSVM fit spent 112 s of its
146 s wall time there (38 CPU s against 3.8 CPU s with one thread). The
parallel work of these solvers is the sparse mat-vec over row blocks
(``n_jobs``), not BLAS, so the solvers run with the BLAS pool limited to one
thread, as scikit-learn does around KMeans' small BLAS calls.

Decisions
---------
* threadpoolctl's public ``ThreadpoolController`` (a scikit-learn
  dependency), created once, at first use, so that it sees the BLAS
  libraries numpy and scipy have loaded; its ``limit`` costs a few
  microseconds, so it wraps every solver entry point.
* The limit is process-wide (BLAS pools are). The estimators set it once
  around the whole fit, in the calling thread, before any worker thread
  starts; the solvers set it again, which is then a no-op. Limits nested this
  way restore what they found, so worker threads never restore a pool size
  another thread still relies on.
* Only the BLAS pools are limited. OpenMP pools are left alone: skssl's own
  compiled kernels (:mod:`skssl.svm._kernels`) are the solvers' only OpenMP
  code, and they pass their thread count explicitly (the fit's ``n_jobs``
  share, see :mod:`skssl.svm._rowblocks`), so neither ``OMP_NUM_THREADS``
  nor the size of the OpenMP pool changes them; scipy's sparse kernels are
  single-threaded C++.
"""

import functools

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread"]

_controller = None


def _get_controller():
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller


def single_blas_thread(func):
    """Run ``func`` with the BLAS thread pools limited to one thread.

    Parameters
    ----------
    func : callable
        The function to wrap.

    Returns
    -------
    wrapper : callable
        ``func`` under ``threadpoolctl``'s ``limit(limits=1, user_api="blas")``.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _get_controller().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper
