"""The solvers of :mod:`skssl.svm`: SVMlin's algorithms and their multi-class relatives.

* :mod:`~skssl.svm.solvers._mfn` -- l2-SVM-MFN, the modified finite Newton
  method (Keerthi & DeCoste, JMLR 2005), which every other solver calls;
* :mod:`~skssl.svm.solvers._problem` -- one binary semi-supervised problem:
  its loss terms, costs, objective and w-step;
* :mod:`~skssl.svm.solvers._tsvm` -- TSVM with multiple label switching;
* :mod:`~skssl.svm.solvers._annealing`, :mod:`~skssl.svm.solvers._da` --
  deterministic annealing (Sindhwani, Keerthi & Chapelle, ICML 2006);
* :mod:`~skssl.svm.solvers._potts`, :mod:`~skssl.svm.solvers._potts_beliefs`
  -- the K-class annealing with the Potts glass;
* :mod:`~skssl.svm.solvers._weston_watkins` -- the multi-class l2-SVM of the
  safeguard's joint refit.

The solvers take arrays and numbers, never an estimator; they import only
:mod:`skssl.svm.kernels` and :mod:`skssl.svm._callback`. Private.
"""
