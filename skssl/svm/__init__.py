"""Linear semi-supervised SVMs for large sparse data (SVMlin's algorithms).

* :class:`LinearL2SVC` -- supervised l2-SVM by the modified finite Newton
  method (l2-SVM-MFN), the baseline and the inner solver;
* :class:`TransductiveSVC` -- transductive SVM with multiple label switching;
* :class:`DeterministicAnnealingSVC` -- semi-supervised SVM by deterministic
  annealing;
* :class:`PottsDeterministicAnnealingSVC` -- its multi-class extension with the
  Potts glass (one consistent labeling over all classes).

Sindhwani & Keerthi, "Large Scale Semi-supervised Linear SVMs", SIGIR 2006.
"""

from ._classes import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC

__all__ = ["DeterministicAnnealingSVC", "LinearL2SVC", "PottsDeterministicAnnealingSVC", "TransductiveSVC"]
