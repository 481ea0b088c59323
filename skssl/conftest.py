"""pytest configuration for the doctests collected from the package itself.

The deep family needs the ``deep`` extra; without torch and skorch its
modules cannot be imported, so their doctests are not collected.
"""

import importlib.util

collect_ignore_glob = []
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("skorch") is None:
    collect_ignore_glob.append("deep/*")
