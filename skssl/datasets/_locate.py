"""Where skssl looks for data files that do not ship with the package.

A reader looks at the caller's path, then ``$SKSSL_DATA``, then a
``shared/data`` folder above the current directory or the source tree, then
scikit-learn's fetchers; when none works it raises
:class:`DatasetUnavailableError`.
"""

import os
from pathlib import Path

__all__ = ["DatasetUnavailableError", "find_data_file"]

ENV_VAR = "SKSSL_DATA"


def _skip_example(fetcher, name, on_error):
    """Decorator appending an Examples section that skips ``fetcher`` on :class:`DatasetUnavailableError`."""

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

    A :class:`FileNotFoundError` whose one-line message says what was tried
    and how to provide the data.

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
    """The first local copy of ``names`` in ``$SKSSL_DATA`` or a ``shared/data`` folder, or None."""
    relative = Path(*names)
    candidates = []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]) / relative)
    candidates.extend(root / "shared" / "data" / relative for root in _search_roots())
    return next((path for path in candidates if path.exists()), None)
