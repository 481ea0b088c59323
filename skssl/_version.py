"""The version of skssl, written in this one place.

``pyproject.toml`` reads it from here (``[tool.setuptools.dynamic]``), so a
source checkout and an installed copy agree; ``skssl.__version__`` and
:func:`skssl.show_versions` hand it on.
"""

__version__ = "0.1.0.dev0"
