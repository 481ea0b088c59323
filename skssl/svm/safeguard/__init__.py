"""The safeguard of the semi-supervised linear estimators (``safeguard="auto"``).

* :mod:`~skssl.svm.safeguard._safeguard` -- the candidate class fractions
  and the rows on which the candidates' models agree;
* :mod:`~skssl.svm.safeguard._fallback_check` -- the cross-validated check
  that keeps the supervised l2-SVM where the held-out labels prefer it.

The estimators' base (:mod:`skssl.svm._base`) runs the safeguard and hands
it the models to compare; nothing here imports an estimator. Private.
"""
