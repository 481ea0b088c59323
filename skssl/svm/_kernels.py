"""The compiled kernels of the linear solvers, or numpy versions of them when skssl was not built.

``skssl/svm/_csr_kernels.pyx`` holds

* ``csr_cgls``: the whole CGLS loop of l2-SVM-MFN on CSR rows, its products
  and vector updates split over row blocks and feature ranges on OpenMP
  threads, with no Python between iterations (see :mod:`skssl.svm._mfn`);
* ``line_search_terms``: the exact line search by selection instead of a
  sort;
* ``belief_mean``: deterministic annealing's mean belief, evaluated a dozen
  times per p-step by brentq (see :mod:`skssl.svm._da`);
* ``csr_matvec_blocks`` and ``csr_matvec_subset``: ``X @ v`` over row blocks
  on OpenMP threads, and the outputs of a subset of rows read in place;
* ``dense_cgls`` and ``dense_matvec_subset``: the same CGLS loop and outputs
  on the rows of a C-contiguous dense ``X``, read in place by row index
  (``dense_blas()`` says whether their row products are scipy's BLAS
  ``ddot``/``daxpy`` or the kernel's own loops);
* ``ThreadSchedule``: how many OpenMP threads run a fit's blocks, chosen by
  timing CGLS's iterations (see :mod:`skssl.svm._rowblocks`);
* CGLS's vector updates for the Python loop (dense ``X``), each one pass
  over its vectors instead of numpy's one pass per operation.

A source tree that was never compiled (``pip install -e .`` compiles it)
runs the Python paths: the numpy versions below, or ``None`` where the
caller has its own (scipy's products, the sorted line search, numpy's
mean). ``COMPILED`` says which is in use, and ``OPENMP`` whether the
compiled kernels were built with OpenMP (``setup.py`` builds them with it
only when the C compiler can build an OpenMP program); both are reported by
``skssl.show_versions()``. Built without OpenMP, the kernels run a
problem's row blocks one after the other in the calling thread: the same
results, but ``n_jobs > 1`` adds no threads to a problem, so
:func:`warn_if_no_openmp` says so once per process (the Python paths run
their blocks on a thread pool and need no warning).
"""

import threading
import warnings

import numpy as np

try:
    from ._csr_kernels import (
        OPENMP,
        ThreadSchedule,
        active_schedule,
        belief_mean,
        cgls_step_direction,
        cgls_step_features,
        cgls_step_rows,
        csr_cgls,
        csr_matvec_blocks,
        csr_matvec_subset,
        dense_blas,
        dense_cgls,
        dense_matvec_subset,
        line_search_terms,
    )
except ImportError:  # a source checkout that was never built
    COMPILED = False
    OPENMP = False
    csr_cgls = csr_matvec_blocks = csr_matvec_subset = None
    dense_cgls = dense_matvec_subset = None

    def dense_blas():
        return False

    belief_mean = line_search_terms = ThreadSchedule = None

    def active_schedule():
        return None

    def cgls_step_features(w, xtz, p, u, step_w, t, alpha):
        w += step_w * p
        xtz -= t * u
        r = xtz - alpha * w
        return float(r @ r)

    def cgls_step_direction(p, xtz, w, scale, alpha):
        p *= scale
        p += xtz
        p -= alpha * w
        return float(p @ p)

    def cgls_step_rows(outputs, z, q, cost, t):
        outputs += t * q
        z -= t * (cost * q)
        return float(z.sum()), float(z @ z)

else:
    COMPILED = True

_no_openmp_warned = False
_no_openmp_lock = threading.Lock()


def warn_if_no_openmp(n_threads):
    """Warn, once per process, that ``n_threads`` threads cannot run on kernels built without OpenMP.

    Called where a fit's problem gets its threads
    (:func:`skssl.svm._rowblocks.thread_pool`). With compiled kernels that
    lack OpenMP, the row blocks of a problem asking for several threads run
    one after the other on one core, which ``n_jobs`` alone would not reveal.
    Nothing is emitted for one thread, for kernels built with OpenMP, or for
    a source tree that was never compiled (its Python paths run the blocks
    on a thread pool).

    Parameters
    ----------
    n_threads : int
        Threads the fit asks for, for one problem's row blocks.

    Warns
    -----
    UserWarning
        The first time a fit asks for ``n_threads >= 2`` in a process whose
        kernels were compiled without OpenMP.
    """
    global _no_openmp_warned
    if n_threads < 2 or not COMPILED or OPENMP:
        return
    with _no_openmp_lock:
        if _no_openmp_warned:
            return
        _no_openmp_warned = True
    warnings.warn(
        f"skssl's compiled kernels were built without OpenMP, so a fit's n_jobs threads ({n_threads} asked for "
        "here) cannot share a problem's work: its row blocks run one after the other on one core (the results "
        "are the same; one-vs-rest problems still run at once). Rebuild skssl with a C compiler that supports "
        "OpenMP (-fopenmp) to use them; skssl.show_versions() reports the build. This warning is shown once.",
        UserWarning,
        stacklevel=2,
    )


def dot(a, b):
    """``a @ b`` of two 1-D float64 arrays, summed by numpy's own loop instead of BLAS.

    BLAS's ``ddot`` on long vectors wakes the BLAS thread pool on every
    call; the solvers make thousands of such calls, and on a busy machine
    each wake-up can cost milliseconds. ``einsum`` (without ``optimize``)
    never calls BLAS, so the solvers need no process-wide BLAS thread limit.
    """
    return float(np.einsum("i,i->", a, b))


__all__ = [
    "COMPILED",
    "OPENMP",
    "ThreadSchedule",
    "active_schedule",
    "belief_mean",
    "cgls_step_direction",
    "cgls_step_features",
    "cgls_step_rows",
    "csr_cgls",
    "dot",
    "csr_matvec_blocks",
    "csr_matvec_subset",
    "dense_blas",
    "dense_cgls",
    "dense_matvec_subset",
    "line_search_terms",
    "warn_if_no_openmp",
]
