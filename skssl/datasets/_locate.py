"""Where skssl looks for data files that do not ship with the package.

Benchmark data sets (20 Newsgroups, MNIST, ...) are too large to ship. A
reader that needs one looks, in this order, at

1. the path the caller gave (used as is: a missing file is an error, never a
   silent fallback);
2. the directory named by the environment variable ``SKSSL_DATA``;
3. a folder ``shared/data`` in the current directory or any of its parents,
   then in the folder holding the skssl source tree or any of its parents
   (the project's layout keeps the data in ``../shared/data`` beside the
   repository);

and, when no local copy is found, falls back to scikit-learn's fetchers (which
download once and cache in ``~/scikit_learn_data``). When neither works it
raises :class:`DatasetUnavailableError`, one exception type that scripts can
catch to skip with a one-line message.
"""

import os
from pathlib import Path

__all__ = ["DatasetUnavailableError", "find_data_file"]

ENV_VAR = "SKSSL_DATA"


def _skip_example(fetcher, name, on_error):
    """Decorator appending the Examples section that catches :class:`DatasetUnavailableError` around ``fetcher``.

    The error class and the fetchers show the same way to skip when the data
    are missing; ``name`` is the variable the data go to and ``on_error`` the
    line the ``except`` clause runs.
    """

    def add_example(obj):
        if obj.__doc__ is None:  # python -OO
            return obj
        obj.__doc__ = obj.__doc__.rstrip(" ") + (
            "\n    Examples\n    --------\n"
            f"    >>> from skssl.datasets import DatasetUnavailableError, {fetcher}\n"
            "    >>> try:  # doctest: +SKIP\n"
            f"    ...     {name} = {fetcher}()\n"
            "    ... except DatasetUnavailableError as exc:\n"
            f"    ...     {on_error}\n    "
        )
        return obj

    return add_example


@_skip_example("fetch_20newsgroups_bydate", "news", 'print(f"skipped: {exc}")')
class DatasetUnavailableError(FileNotFoundError):
    """A data set is neither available locally nor downloadable.

    It subclasses :class:`FileNotFoundError` (hence :class:`OSError`), so code
    that already catches those keeps working. The message is one line saying
    what was tried and how to provide the data.

    See Also
    --------
    fetch_20newsgroups_bydate : 20 Newsgroups from a local archive or scikit-learn's download.
    fetch_mnist : MNIST from a local copy or OpenML.
    """


def _search_roots():
    package_root = Path(__file__).resolve().parents[2]  # the folder holding skssl/
    roots = []
    for start in (Path.cwd().resolve(), package_root):
        for folder in (start, *start.parents):
            if folder not in roots:
                roots.append(folder)
    return roots


def find_data_file(*names):
    """Return the first local copy of ``names`` (a path relative to a data folder), or None.

    Looks in ``$SKSSL_DATA`` first, then in ``shared/data`` under the current
    directory and its parents, then under the source tree's folder and its
    parents.
    """
    relative = Path(*names)
    candidates = []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]) / relative)
    candidates.extend(root / "shared" / "data" / relative for root in _search_roots())
    return next((path for path in candidates if path.exists()), None)
