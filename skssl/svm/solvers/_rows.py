"""The row-backend protocol that l2-SVM-MFN's Newton loop is written against.

:func:`~skssl.svm.solvers._mfn.newton_solve` (Keerthi & DeCoste, JMLR 2005, as
SVMlin's ``L2_SVM_MFN``) is written once over the passes of :class:`NewtonRows`;
the in-memory backend runs each in the compiled kernels, the Dask one over
the blocks on the workers. The design follows scikit-learn's ``NewtonSolver``
and dask-glm.
"""

from abc import ABC, abstractmethod

__all__ = ["NewtonRows"]


class NewtonRows(ABC):
    """The rows of one l2-SVM-MFN problem and the passes over them that its Newton loop needs.

    A backend holds the loss terms, the outputs ``o`` at ``(w, b)``, the active
    Newton system and the outputs ``o_bar`` at the last Newton point; the
    weights stay with the caller. A multi-problem backend stacks ``k`` problems.

    Attributes
    ----------
    n_features : int
        Length of ``w``.
    x_norm : float
        Frobenius norm of the rows that the solve sees (CGLS's rounding floor).
    outputs : object
        The outputs at the current point, as the backend holds them (an
        ndarray in memory, the blocks' states on a cluster).
    """

    n_features: int
    x_norm: float

    @abstractmethod
    def objective(self, w, b, alpha, alpha_b):
        """``F(w, b)`` at the current outputs (which must be those of ``(w, b)``)."""

    @abstractmethod
    def newton_system(self):
        """Build the Newton system of the terms active at the current outputs; return its number of rows."""

    @abstractmethod
    def cgls(self, w, b, alpha, alpha_b, eps, max_iter, seeded):
        """CGLS on the current Newton system from ``(w, b)``; ``(w_bar, b_bar, converged, n_iter)``.

        ``seeded``: start from the last Newton point (see :meth:`restart`)."""

    @abstractmethod
    def newton_point(self, w_bar, b_bar, eps):
        """The outputs ``o_bar`` at the Newton point; whether every term is on its side of the margin to ``eps``."""

    @abstractmethod
    def restart(self):
        """Seed the current Newton system with the outputs of the Newton point (for a tighter tolerance)."""

    @abstractmethod
    def line_search(self, w, w_bar, b, b_bar, alpha, alpha_b, count):
        """The exact step towards the Newton point; ``(delta, n_breakpoints)``, the latter only when ``count``."""

    @abstractmethod
    def step(self, delta):
        """Move the current outputs by ``delta`` towards ``o_bar``."""

    @abstractmethod
    def accept(self):
        """Move the current outputs to ``o_bar`` (the Newton point was optimal)."""
