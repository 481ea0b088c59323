"""Plain numpy versions of the compiled kernels' algorithms: the oracles the kernel tests compare against.

skssl's solvers run only the compiled kernels (``skssl/svm/_csr_kernels.pyx``). These are the same
algorithms written out with scipy's and numpy's products, one operation at a time, as they stood in
Python before the kernels took over: CGLS (:func:`cgls`, with :func:`gram_product` for its two products)
and the sorted exact line search (:func:`line_search_sorted`). They are never imported by skssl.
"""

import numpy as np
import scipy.sparse as sp

from skssl.svm.kernels._kernels import dot


def gram_product(A, p, pb, p_norm, cost):
    """CGLS's two products on the rows of ``A``: ``q = (A p + pb) / p_norm``, ``A^T (c q)``, ``sum(c q)``, ``q C q``."""
    q = A @ p
    q += pb
    q /= p_norm
    cq = cost * q
    return q, A.T @ cq, float(cq.sum()), dot(q, cq)


def cgls(XJ, cost, target, outputs, w, b, alpha, eps, max_iter, alpha_b=None):
    """:func:`skssl.svm.solvers._mfn.cgls` as a Python loop over scipy's / numpy's products.

    ``w`` and ``outputs`` are updated in place.
    """
    alpha_b = alpha if alpha_b is None else alpha_b
    if XJ.shape[0] == 0:
        w[:] = 0.0
        return 0.0, True, 0
    XT = XJ.T.tocsc() if sp.issparse(XJ) else XJ.T
    z = cost * (target - outputs)
    xtz = XT @ z
    r = xtz - alpha * w
    rb = z.sum() - alpha_b * b
    omega1 = dot(r, r) + rb * rb
    eps2 = eps * eps
    if omega1 <= eps2 * dot(z, z):
        return b, True, 0
    p = r.copy()
    pb = rb
    omega_p = omega1
    for it in range(1, max_iter + 1):
        # q is X p for the unit direction p / |p| (see the kernel's comments).
        p_norm = np.sqrt(omega_p)
        q, u, _, qcq = gram_product(XJ, p, pb, p_norm, cost)
        t = (omega1 / p_norm) / (alpha + (alpha_b - alpha) * (pb / p_norm) ** 2 + qcq)
        # The vector updates, their sums added one term after another as the kernel adds them.
        w += (t / p_norm) * p
        xtz -= t * u
        r = xtz - alpha * w
        b += (t / p_norm) * pb
        outputs += t * q
        z -= t * (cost * q)
        rb = _sequential_sum(z) - alpha_b * b
        omega_new = _sequential_sum(r * r) + rb * rb
        if omega_new <= eps2 * _sequential_sum(z * z):
            return b, True, it
        scale = omega_new / omega1
        omega1 = omega_new
        pb = rb + scale * pb
        p *= scale
        p += xtz - alpha * w
        omega_p = _sequential_sum(p * p) + pb * pb
    return b, False, max_iter


def _sequential_sum(a):
    # a[0] + a[1] + ... in that order (numpy's sum adds pairwise).
    return float(np.cumsum(a)[-1]) if a.size else 0.0


def line_search_sorted(L, R, o, o_bar, y, cost):
    """The loss terms' part of :func:`skssl.svm.solvers._mfn.line_search` by sorting the breakpoints."""
    yo = y * o
    active = yo < 1.0
    do = o_bar - o
    cdo = cost * do
    L += dot(o[active] - y[active], cdo[active])
    R += dot(o_bar[active] - y[active], cdo[active])
    slope = y * do
    leaving = active & (slope > 0)
    entering = ~active & (slope < 0)
    idx = np.flatnonzero(leaving | entering)
    if idx.size == 0:
        return _root(L, R)
    with np.errstate(over="ignore", divide="ignore"):
        deltas = (1.0 - yo[idx]) / slope[idx]
    sign = np.where(entering[idx], 1.0, -1.0)
    order = np.argsort(deltas, kind="stable")
    deltas = deltas[order]
    idx = idx[order]
    sc = sign[order] * cdo[idx]
    dL = sc * (o[idx] - y[idx])
    dR = sc * (o_bar[idx] - y[idx])
    # L_k, R_k: the slope coefficients on the piece that ends at breakpoint k.
    Lk = np.empty(idx.size + 1)
    Rk = np.empty(idx.size + 1)
    Lk[0] = L
    Rk[0] = R
    np.cumsum(dL, out=Lk[1:])
    np.cumsum(dR, out=Rk[1:])
    Lk[1:] += L
    Rk[1:] += R
    with np.errstate(invalid="ignore", over="ignore"):
        stop = Lk[:-1] + deltas * (Rk[:-1] - Lk[:-1]) >= 0
    k = int(np.argmax(stop)) if stop.any() else idx.size
    return _root(Lk[k], Rk[k])


def _root(L, R):
    return float(-L / (R - L)) if R > L else 0.0
