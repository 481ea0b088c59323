"""One convergence warning per meta-estimator fit, not one per inner fit.

A meta-estimator fits its wrapped estimator many times: Curriculum Labeling
fits it once per round, and its safeguard runs the whole curriculum again on
every fold (24 fits with the defaults). An estimator that does not converge on
the data (``LogisticRegression`` on unscaled features) warns in every one of
those fits, and the user's console fills with copies of one message.

:func:`convergence_tally` is opened around a meta-estimator's ``fit``; each
inner fit runs in :meth:`ConvergenceTally.fit`, which keeps that fit's
``ConvergenceWarning`` s and lets every other warning through. When the
outermost ``fit`` returns, :meth:`ConvergenceTally.warn` issues one
``ConvergenceWarning`` that says how many of its
inner fits did not converge and what to do. A meta-estimator fitted inside
another one's fit (the safeguard's folds) adds its fits to the outer tally
and warns nothing itself; the tally is a context variable, so fits in other
threads keep their own.
"""

import contextvars
import warnings
from contextlib import contextmanager

from sklearn.exceptions import ConvergenceWarning

from ..utils._warnings import user_stacklevel

__all__ = ["ConvergenceTally", "convergence_tally"]

_ACTIVE = contextvars.ContextVar("skssl_convergence_tally", default=None)


class ConvergenceTally:
    """How many inner fits ran, how many of them did not converge, and the first such message."""

    def __init__(self):
        self.n_fits = 0
        self.n_unconverged = 0
        self.estimator_name = None
        self.first_message = None

    @contextmanager
    def fit(self, model):
        """Run one inner fit of ``model``, keeping its ``ConvergenceWarning`` s (others pass on)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            yield
        self.n_fits += 1
        self.estimator_name = self.estimator_name or type(model).__name__
        unconverged = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        if unconverged:
            self.n_unconverged += 1
            self.first_message = self.first_message or str(unconverged[0].message)
        for w in caught:
            if not issubclass(w.category, ConvergenceWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

    def warn(self, meta_name):
        """Warn once, at the user's line, when some inner fits did not converge."""
        if self.n_unconverged:
            warnings.warn(self._message(meta_name), ConvergenceWarning, stacklevel=user_stacklevel())

    def _message(self, meta_name):
        first = " ".join(self.first_message.split())
        return (
            f"{self.n_unconverged} of the {self.n_fits} fits of {self.estimator_name} inside {meta_name}.fit "
            f"did not converge (first message: {first!r}). Scale X (e.g. make_pipeline(StandardScaler(), "
            f"{self.estimator_name}(...))) or raise the estimator's max_iter."
        )


@contextmanager
def convergence_tally():
    """The tally of a meta-estimator's fit: the enclosing fit's, else a new one.

    Yields
    ------
    tally : ConvergenceTally
        Where the inner fits are run (:meth:`ConvergenceTally.fit`).
    outermost : bool
        Whether this fit opened the tally, and so calls :meth:`ConvergenceTally.warn` when it returns.
    """
    outer = _ACTIVE.get()
    if outer is not None:
        yield outer, False
        return
    tally = ConvergenceTally()
    token = _ACTIVE.set(tally)
    try:
        yield tally, True
    finally:
        _ACTIVE.reset(token)
