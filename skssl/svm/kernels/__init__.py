"""The bottom layer of :mod:`skssl.svm`: the linear algebra the solvers run on.

* :mod:`~skssl.svm.kernels._kernels` -- the products and CGLS solves of the
  compiled kernels (:mod:`skssl.svm._csr_kernels`) on CSR or dense rows;
* :mod:`~skssl.svm.kernels._rowblocks` -- the blocks of rows the kernels'
  OpenMP threads share, and the thread counts of a fit;
* :mod:`~skssl.svm.kernels._validation` -- the checks of the design matrix
  ``X`` and of the row weights before a solver sees them;
* :mod:`~skssl.svm.kernels._row_order` -- the distinct rows of a matrix in
  an order that depends on their content alone.

Nothing here imports another part of :mod:`skssl.svm` (the layers are the
import-linter contracts of ``pyproject.toml``). Private: the names may change
without notice.
"""
