"""A fit on a private working copy of the estimator, its fitted attributes stored on the estimator in one step.

scikit-learn's convention is that ``fit`` computes into local variables and
sets the fitted attributes (names ending in ``_``) at the end; the last fit
to finish is the model. A fit that writes its attributes as it goes, and
reads them back later in the same fit, goes wrong as soon as two fits of the
same object overlap (threads of a grid search that share one estimator, a
web server refitting a model): one fit reads or scales the values of the
other. :func:`working_copy` gives a fit an object of its own to work on;
:func:`publish_fitted` stores its fitted attributes on the estimator under a
lock, removing those of an earlier fit that this one does not set, so the
result is exactly one fit's, whatever else ran.

What a fit sets on itself but must not carry into the next fit (private
state read by the fits it starts) is left out of the working copy by name;
private inputs a caller set on the estimator before ``fit`` stay.
"""

import threading

__all__ = ["is_fitted_name", "publish_fitted", "working_copy"]

#: Held while a fit's attributes are stored, so that two fits that end at once do not mix their attributes.
_PUBLISH_LOCK = threading.Lock()


def is_fitted_name(name):
    """Whether ``name`` is a public fitted attribute (ends with ``_``, does not start with one)."""
    return name.endswith("_") and not name.startswith("_")


def working_copy(estimator, fit_state=()):
    """A shallow copy of ``estimator`` without its fitted attributes, nor the private ones named in ``fit_state``.

    The parameters and the private attributes a caller set before ``fit`` are shared with ``estimator``
    (they are read, not written, by a fit).
    """
    copy = type(estimator).__new__(type(estimator))
    copy.__dict__.update(
        {name: value for name, value in vars(estimator).items() if not is_fitted_name(name) and name not in fit_state}
    )
    return copy


def publish_fitted(estimator, fitted, private=()):
    """Store the fitted attributes of ``fitted`` (and those of ``private`` it has) on ``estimator``, in one step.

    Fitted attributes of ``estimator`` that ``fitted`` lacks are removed; a private name of ``private`` that
    ``fitted`` lacks is removed too.
    """
    names = [name for name in vars(fitted) if is_fitted_name(name) or name in private]
    values = {name: getattr(fitted, name) for name in names}
    with _PUBLISH_LOCK:
        stale = [name for name in vars(estimator) if (is_fitted_name(name) or name in private) and name not in values]
        for name in stale:
            delattr(estimator, name)
        estimator.__dict__.update(values)
    return estimator
