"""A fit on a private working copy of the estimator, its fitted attributes stored on the estimator in one step.

A fit that writes its attributes as it goes breaks when two fits of one
object overlap in threads. :func:`working_copy` gives a fit an object of its
own; :func:`publish_fitted` stores its fitted attributes under a lock, so the
result is exactly one fit's.
"""

import threading

__all__ = ["is_fitted_name", "publish_fitted", "working_copy"]

_PUBLISH_LOCK = threading.Lock()


def is_fitted_name(name):
    """Whether ``name`` is a public fitted attribute (ends with ``_``, does not start with one)."""
    return name.endswith("_") and not name.startswith("_")


def working_copy(estimator, fit_state=()):
    """A shallow copy of ``estimator`` without its fitted attributes and the private ones in ``fit_state``."""
    copy = type(estimator).__new__(type(estimator))
    copy.__dict__.update(
        {name: value for name, value in vars(estimator).items() if not is_fitted_name(name) and name not in fit_state}
    )
    return copy


def publish_fitted(estimator, fitted, private=()):
    """Store the fitted attributes of ``fitted`` (and ``private`` ones) on ``estimator``, dropping stale ones."""
    names = [name for name in vars(fitted) if is_fitted_name(name) or name in private]
    values = {name: getattr(fitted, name) for name in names}
    with _PUBLISH_LOCK:
        stale = [name for name in vars(estimator) if (is_fitted_name(name) or name in private) and name not in values]
        for name in stale:
            delattr(estimator, name)
        estimator.__dict__.update(values)
    return estimator
