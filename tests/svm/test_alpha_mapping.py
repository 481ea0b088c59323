"""LinearL2SVC's ``alpha`` against scikit-learn's ``LinearSVC(C=..., loss="squared_hinge")``.

``LinearL2SVC`` minimizes ``1/2 (alpha (|w|^2 + b^2) + (1/l) sum_i max(0, 1 - y_i o_i)^2)``
over its ``l`` labeled rows; liblinear's primal l2-loss SVM minimizes
``1/2 (|w|^2 + b^2) + C sum_i max(0, 1 - y_i o_i)^2`` (its bias is an extra
feature of value ``intercept_scaling = 1``, regularized like a weight). Dividing
the first by ``alpha`` gives the second with ``C = 1 / (2 alpha l)``, so both
must return the same solution. (SVMlin's ``-W`` is ``alpha * l``: its supervised
costs are not divided by ``l``; that side needs SVMlin itself: checked side by side
on pcmac, the figures are in ``CHANGELOG.md``.)
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import LinearSVC

from skssl.svm import LinearL2SVC


def _liblinear(X, y, C):
    return LinearSVC(C=C, loss="squared_hinge", penalty="l2", dual=False, tol=1e-12, max_iter=100_000).fit(X, y)


@pytest.mark.parametrize("alpha", [1e-3, 1e-2, 0.3])
@pytest.mark.parametrize("sparse", [False, True])
def test_alpha_maps_to_linearsvc_C(alpha, sparse):
    X, y = make_classification(120, 8, n_informative=4, flip_y=0.1, random_state=0)
    y_semi = y.copy()
    y_semi[::3] = -1  # unlabeled rows: LinearL2SVC ignores them, l counts the labeled rows only
    labeled = y_semi != -1
    l = int(labeled.sum())
    Xf = sp.csr_matrix(X) if sparse else X
    ours = LinearL2SVC(alpha=alpha, tol=1e-12).fit(Xf, y_semi)
    ref = _liblinear(Xf[labeled], y[labeled], C=1.0 / (2.0 * alpha * l))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-7)


def test_other_mappings_do_not_match():
    # The check can fail: C = 1 / (alpha l) (no factor 2) or C = 1 / (2 alpha)
    # (no division by l) give visibly different weights.
    X, y = make_classification(120, 8, n_informative=4, flip_y=0.1, random_state=0)
    alpha, l = 0.1, y.size
    ours = LinearL2SVC(alpha=alpha, tol=1e-12).fit(X, y)
    for C in (1.0 / (alpha * l), 1.0 / (2.0 * alpha)):
        ref = _liblinear(X, y, C)
        assert np.abs(ours.coef_ - ref.coef_).max() > 1e-2 * np.abs(ref.coef_).max()
