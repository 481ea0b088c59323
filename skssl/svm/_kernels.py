"""The compiled kernels of CGLS, or numpy versions of them when skssl was not built.

``skssl/svm/_csr_kernels.pyx`` holds the fused product over CSR rows (see
:mod:`skssl.svm._rowblocks`) and CGLS's vector updates, each one pass over
its vectors instead of numpy's one pass per operation and temporary: on 20
Newsgroups the updates of the weight-sized vectors took a tenth of a
two-thread fit, all of it on one core while the other waited. A source tree
that was never compiled (``pip install -e .`` compiles it) runs the numpy
versions below, which compute the same quantities; ``COMPILED`` says which
is in use (reported by ``skssl.show_versions()``).
"""

try:
    from ._csr_kernels import (
        belief_mean,
        cgls_step_direction,
        cgls_step_features,
        cgls_step_rows,
        csr_cgls,
        csr_gram_rows,
        csr_matvec_blocks,
        csr_matvec_subset,
        csr_rmatvec_blocks,
        line_search_terms,
    )
except ImportError:  # a source checkout that was never built
    COMPILED = False
    csr_cgls = csr_gram_rows = csr_matvec_blocks = csr_matvec_subset = csr_rmatvec_blocks = None
    belief_mean = line_search_terms = None

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

__all__ = [
    "COMPILED",
    "belief_mean",
    "cgls_step_direction",
    "cgls_step_features",
    "cgls_step_rows",
    "csr_cgls",
    "csr_gram_rows",
    "csr_matvec_blocks",
    "csr_matvec_subset",
    "csr_rmatvec_blocks",
    "line_search_terms",
]
