"""Warnings that point at the user's line: the first frame outside skssl and scikit-learn.

A fixed ``stacklevel`` counts frames, and the count changes with every wrapper between the user's call and the
warning: scikit-learn's ``_fit_context`` around ``fit``, an estimator's own ``_fit`` override, a scorer inside a
search. So the level is found by walking the stack instead, as pandas does (``find_stack_level``): a warning
raised in a fit started by ``est.fit(X, y)`` in the user's script is reported at that line, and a user's
``warnings.filterwarnings(module=...)`` of their own module applies to it. A fit run in a worker thread has
threading's frames above skssl's, and the warning then points there.
"""

import os
import sys

import sklearn

#: The packages whose frames are never the user's: skssl (this file's grandparent folder) and scikit-learn.
_INTERNAL = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,
)


def user_stacklevel():
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that names the user's frame.

    Returns
    -------
    level : int
        1 for the calling function itself, plus one for every frame above it inside skssl or scikit-learn.
    """
    frame = sys._getframe(1)  # the function about to call warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        level += 1
    return level
