"""The row-backend protocol that l2-SVM-MFN's Newton loop is written against.

:func:`~skssl.svm.solvers._mfn.newton_solve` is the modified finite Newton
method of Keerthi & DeCoste (JMLR 2005), as SVMlin's ``L2_SVM_MFN`` runs it,
written once over the operations of :class:`NewtonRows`: the outputs of the
loss terms, the active Newton system, a whole CGLS solve of it, the Newton
point's optimality test, the exact line search and the step. Each operation
is a pass over the rows, which a backend runs where its rows are: the
in-memory one (:class:`~skssl.svm.solvers._mfn.MemoryRows`) in one call of
the compiled kernels, the Dask one (in :mod:`skssl.svm.dask`) in rounds over
the blocks on the workers. The client side of the loop (the weights, the
tolerances, the stopping rules, the callback's events) is the template's.

The template follows scikit-learn's ``NewtonSolver.solve`` (one loop whose
steps are methods); the backends are chosen as in dask-glm, where each
algorithm is written once over array operations that dispatch.
"""

from abc import ABC, abstractmethod

__all__ = ["NewtonRows"]


class NewtonRows(ABC):
    """The rows of one l2-SVM-MFN problem and the passes over them that its Newton loop needs.

    A backend holds the loss terms (targets, costs, the row of each term),
    the outputs ``o`` of the rows at the current point ``(w, b)``, the active
    Newton system built at those outputs, and the outputs ``o_bar`` at the
    last Newton point. The weights stay with the caller: every operation
    that needs them takes them.

    The operations are written for one problem. A backend for several
    problems over the same rows (the same ``X``, other targets or costs) runs
    each of them on a stack: ``w`` of shape ``(k, n_features)``, ``k`` active
    sets, ``k`` CGLS directions, one pass over the rows for all ``k``.

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
        """Solve the current Newton system by CGLS from ``(w, b)`` (not modified).

        ``seeded``: the seed is the last Newton point of the same system, whose
        outputs the system keeps (see :meth:`restart`). Returns
        ``(w_bar, b_bar, converged, n_iter)``.
        """

    @abstractmethod
    def newton_point(self, w_bar, b_bar, eps):
        """The outputs ``o_bar`` at the Newton point; whether every term is on its side of the margin to ``eps``."""

    @abstractmethod
    def restart(self):
        """Seed the current Newton system with the outputs of the Newton point (for a tighter tolerance)."""

    @abstractmethod
    def line_search(self, w, w_bar, b, b_bar, alpha, alpha_b, count):
        """The exact step ``delta`` from ``(w, b)`` towards the Newton point; ``(delta, n_breakpoints)``.

        ``n_breakpoints``, the terms that enter or leave the active set along
        the step, is computed when ``count`` (else ``None``).
        """

    @abstractmethod
    def step(self, delta):
        """Move the current outputs by ``delta`` towards ``o_bar``."""

    @abstractmethod
    def accept(self):
        """Move the current outputs to ``o_bar`` (the Newton point was optimal)."""
