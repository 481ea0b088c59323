"""Fits of the one-vs-rest linear estimators on a Dask array, an optional backend.

* :mod:`~skssl.svm.dask._dask_fit` -- ``fit`` on a cluster: the estimator's
  side, and the table of the estimators' block solvers;
* :mod:`~skssl.svm.dask._dask_rows` -- the row blocks and their per-row
  state, kept on the workers;
* :mod:`~skssl.svm.dask._dask_problem`, :mod:`~skssl.svm.dask._dask_mfn`,
  :mod:`~skssl.svm.dask._dask_tsvm`, :mod:`~skssl.svm.dask._dask_da` -- the
  solvers of :mod:`skssl.svm.solvers` as rounds over the blocks.

A leaf: nothing in skssl imports this package by name. The estimators' base
loads :mod:`~skssl.svm.dask._dask_fit` with :func:`importlib.import_module`
when ``fit`` is given a Dask array, so an in-memory fit never loads Dask.
Private.
"""
