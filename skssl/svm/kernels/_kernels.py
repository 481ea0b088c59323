"""The compiled kernels of the linear solvers: the one path their products and CGLS take.

``skssl/svm/_csr_kernels.pyx`` holds ``csr_cgls`` and ``dense_cgls`` (the
whole CGLS loop of l2-SVM-MFN on OpenMP threads, see :mod:`skssl.svm.solvers._mfn`),
``line_search_terms`` (the exact line search by selection),
``belief_sums`` (deterministic annealing's belief sums at a round of thresholds, :mod:`skssl.svm.solvers._da`),
``csr_matvec_blocks``, ``csr_matvec_subset`` and ``dense_matvec_subset``
(products over row blocks and listed rows) and ``ThreadSchedule`` (how many
threads run a fit's blocks, :mod:`skssl.svm.kernels._rowblocks`).

There is no other path: importing :mod:`skssl.svm` from a tree whose
extension was never built raises an ``ImportError`` that says how to build
it. ``OPENMP`` says whether the kernels were built with OpenMP; without it,
``n_jobs > 1`` adds no threads, and :func:`warn_if_no_openmp` says so once.
"""

import threading
import warnings

import numpy as np

from ...utils._warnings import user_stacklevel

try:
    from .._csr_kernels import (
        OPENMP,
        ThreadSchedule,
        active_schedule,
        belief_mean,
        belief_sums,
        csr_cgls,
        csr_matvec_blocks,
        csr_matvec_subset,
        dense_blas,
        dense_cgls,
        dense_matvec_subset,
        line_search_terms,
    )
except ImportError as exc:  # a source tree whose extension was never built
    raise ImportError(
        "skssl's compiled kernels (skssl/svm/_csr_kernels.pyx) are not built, and skssl.svm has no other path. "
        "Build them: `pip install -e .`, or `python setup.py build_ext --inplace` in the source tree (needs "
        f"Cython and a C compiler). ({exc})"
    ) from exc

_no_openmp_warned = False
_no_openmp_lock = threading.Lock()


def warn_if_no_openmp(n_threads):
    """Warn, once per process, that ``n_threads >= 2`` threads cannot run on kernels built without OpenMP.

    Called by :func:`skssl.svm.kernels._rowblocks.fit_threads`: without OpenMP the row
    blocks run one after the other on one core, which ``n_jobs`` alone would not
    reveal.
    """
    global _no_openmp_warned
    if n_threads < 2 or OPENMP:
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
        stacklevel=user_stacklevel(),
    )


def dot(a, b):
    """``a @ b`` of two 1-D float64 arrays, summed by numpy's own loop instead of BLAS.

    BLAS's ``ddot`` on long vectors wakes the BLAS thread pool on every
    call; the solvers make thousands of such calls, and on a busy machine
    each wake-up can cost milliseconds. ``einsum`` (without ``optimize``)
    never calls BLAS, so the solvers need no process-wide BLAS thread limit.
    """
    return float(np.einsum("i,i->", a, b))


def squared_norm(a):
    """The sum of squares of a 1-D or 2-D float64 array, without BLAS (as :func:`dot`) and without a copy."""
    return float(np.einsum("i,i->", a, a) if a.ndim == 1 else np.einsum("ij,ij->", a, a))


__all__ = [
    "OPENMP",
    "ThreadSchedule",
    "active_schedule",
    "belief_mean",
    "belief_sums",
    "csr_cgls",
    "dot",
    "csr_matvec_blocks",
    "csr_matvec_subset",
    "dense_blas",
    "dense_cgls",
    "dense_matvec_subset",
    "line_search_terms",
    "squared_norm",
    "warn_if_no_openmp",
]
