"""Progress callbacks of the linear solvers: the event they receive and the context that installs one.

Every solver (:func:`~skssl.svm.solvers._mfn.l2_svm_mfn`, :func:`~skssl.svm.solvers._tsvm.tsvm`,
:func:`~skssl.svm.solvers._da.deterministic_annealing`,
:func:`~skssl.svm.solvers._potts.potts_annealing`) takes ``callback=None`` and calls
it with a read-only :class:`SolverEvent` at the stages it documents, passing
it on to its l2-SVM-MFN solves. A callback only reads: a fit is the same, bit
for bit, with or without one. :func:`solver_callback` installs a callback
for the solvers called inside a ``with`` block (this thread and the
one-vs-rest threads it starts)::

    from collections import Counter
    counts = Counter()
    with solver_callback(lambda event: counts.update([event.stage])):
        TransductiveSVC().fit(X, y)

Stages: ``"cgls"``, ``"line_search"``, ``"mfn"``, ``"switch"`` (TSVM),
``"init"``, ``"p"`` and ``"w"`` (annealing, :func:`~skssl.svm.solvers._annealing.anneal`).
"""

import contextlib
import contextvars
from collections.abc import Mapping

__all__ = ["SolverEvent", "current_callback", "notify", "solver_callback"]

_CALLBACK = contextvars.ContextVar("skssl_solver_callback", default=None)


class SolverEvent(Mapping):
    """A read-only record of one point of a solver's progress: its ``stage`` and fields.

    Fields are read as attributes (``event.n_iter``) or as a mapping
    (``event["n_iter"]``, ``dict(event)``); arrays among them are read-only views.
    """

    __slots__ = ("_fields", "stage")

    def __init__(self, stage, **fields):
        object.__setattr__(self, "stage", stage)
        object.__setattr__(self, "_fields", fields)

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"SolverEvent {self.stage!r} has no field {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("SolverEvent is read-only")

    def __getitem__(self, name):
        return self._fields[name]

    def __iter__(self):
        return iter(self._fields)

    def __len__(self):
        return len(self._fields)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self._fields.items() if not hasattr(v, "shape"))
        return f"SolverEvent({self.stage!r}, {fields})"


def notify(callback, stage, **fields):
    """Call ``callback`` with a :class:`SolverEvent` of ``stage`` and ``fields`` (arrays as read-only views)."""
    for name, value in fields.items():
        if hasattr(value, "view") and hasattr(value, "flags"):
            view = value.view()
            view.flags.writeable = False
            fields[name] = view
    callback(SolverEvent(stage, **fields))


def current_callback(callback=None):
    """``callback`` if given, otherwise the one :func:`solver_callback` installed (or None)."""
    return _CALLBACK.get() if callback is None else callback


@contextlib.contextmanager
def solver_callback(callback):
    """Install ``callback`` for the solvers called inside the ``with`` block that are given none.

    Parameters
    ----------
    callback : callable
        Called as ``callback(event)`` with a :class:`SolverEvent`.

    Yields
    ------
    callback : callable
        The callback.
    """
    token = _CALLBACK.set(callback)
    try:
        yield callback
    finally:
        _CALLBACK.reset(token)
