"""Warnings that point at the user's line: the first frame outside skssl and scikit-learn.

A fixed ``stacklevel`` breaks with every wrapper between the user's call and
the warning, so the level is found by walking the stack, as pandas'
``find_stack_level`` does.
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
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that names the user's frame."""
    frame = sys._getframe(1)  # the function about to call warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        level += 1
    return level
