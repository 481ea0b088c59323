"""A small semi-supervised estimator used only by the tests.

``SeededCentroidClassifier`` is seeded k-means: class centroids start at the
means of the labeled rows, then each unlabeled row joins its nearest
centroid and the centroids are recomputed from labeled plus assigned rows,
``max_iter`` times. It is real enough to exercise every part of the
contract (unlabeled rows move the centroids, sparse input stays sparse) and
small enough to read in a minute.
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from skssl.base import SemiSupervisedClassifierMixin


class SeededCentroidClassifier(SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator):
    """Nearest-centroid classifier refined by seeded k-means on unlabeled rows.

    Parameters
    ----------
    max_iter : int, default=5
        Number of assign-and-update rounds over the unlabeled rows.
    """

    _parameter_constraints = {"max_iter": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, max_iter=5):
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y_enc, mask = self._validate_semi_supervised_data(X, y)
        assignment = y_enc.copy()
        self.n_iter_ = 0
        for _ in range(self.max_iter):
            self.centroids_ = self._centroids(X, assignment)
            assignment = np.where(mask, y_enc, self._nearest(X))
            self.n_iter_ += 1
        self.centroids_ = self._centroids(X, assignment)
        self._set_transduction(y_enc, assignment)
        return self

    def _centroids(self, X, assignment):
        rows = [np.flatnonzero(assignment == k) for k in range(self.classes_.shape[0])]
        return np.vstack([np.asarray(X[r].mean(axis=0)).ravel() for r in rows])

    def _nearest(self, X):
        return np.argmax(self._scores(X), axis=1)

    def _scores(self, X):
        # -||x - c||^2 up to the per-row constant ||x||^2.
        cross = X @ self.centroids_.T
        cross = cross.toarray() if sp.issparse(cross) else np.asarray(cross)
        return 2 * cross - (self.centroids_**2).sum(axis=1)

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"), reset=False, dtype=(np.float64, np.float32))
        scores = self._scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"), reset=False, dtype=(np.float64, np.float32))
        return self._decode(self._nearest(X))
