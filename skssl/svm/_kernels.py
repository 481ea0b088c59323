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
mean). ``COMPILED`` says which is in use (reported by
``skssl.show_versions()``).
"""

import numpy as np

try:
    from ._csr_kernels import (
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
]
