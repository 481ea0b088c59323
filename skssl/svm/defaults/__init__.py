"""The data-aware defaults of the linear estimators (the ``"auto"`` values).

* :mod:`~skssl.svm.defaults._regularization` -- ``alpha="auto"`` and
  ``intercept_scaling="auto"`` from the rows' norms and column means;
* :mod:`~skssl.svm.defaults._penalty_check` -- the labeled rows'
  cross-validated check that may lower ``alpha="auto"``;
* :mod:`~skssl.svm.defaults._cluster_fractions` -- ``positive_fraction``
  from clusters of the rows;
* :mod:`~skssl.svm.defaults._annealing_start` -- ``initial_temperature="auto"``
  of the binary annealing.

A policy that fits a model is handed the estimator (or its class) by the
caller and never imports :mod:`skssl.svm._classes`. Private.
"""
