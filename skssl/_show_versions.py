"""Print the versions and thread pools a bug report needs, like ``sklearn.show_versions``.

Versions come from the installed packages' metadata, so a broken package
still shows its version (skssl's own is ``skssl.__version__``). Thread pools
are read with :func:`threadpoolctl.threadpool_info`; torch, when installed,
is imported so that its OpenMP pool, the deep nets', is listed too.
"""

import importlib
import importlib.util
import platform
import sys
from importlib.metadata import PackageNotFoundError, version

from threadpoolctl import threadpool_info

from ._version import __version__

__all__ = ["show_versions"]

_DEPENDENCIES = (
    "pip",
    "setuptools",
    "numpy",
    "scipy",
    "scikit-learn",
    "joblib",
    "threadpoolctl",
    "torch",
    "skorch",
    "pandas",
    "dask",
    "distributed",
    "skops",
)


def _kernel_build():
    """``(compiled, openmp)``: whether skssl's compiled kernels can be imported, and whether they have OpenMP.

    A source tree whose extension was never built has no kernels, and :mod:`skssl.svm` cannot be imported
    there (its ``ImportError`` says how to build); ``show_versions`` still reports it.
    """
    try:
        _kernels = importlib.import_module(".svm.kernels._kernels", __package__)
    except ImportError:
        return False, False
    return True, _kernels.OPENMP


def _system_info():
    compiled, openmp = _kernel_build()
    return {
        "python": sys.version.replace("\n", " "),
        "executable": sys.executable,
        "machine": platform.platform(),
        # Without them skssl.svm cannot be imported (there is no other path).
        "csr kernel": "compiled" if compiled else "not built (skssl.svm cannot be imported; build the extension)",
        # Built without OpenMP, the kernels run a problem's row blocks on one core whatever n_jobs says.
        "kernel openmp": _openmp_state(compiled, openmp),
    }


def _openmp_state(compiled, openmp):
    """The ``kernel openmp`` line: whether the kernels were built with OpenMP, and whether they are compiled.

    Parameters
    ----------
    compiled : bool
        Whether the compiled kernels can be imported.
    openmp : bool
        ``skssl.svm.kernels._kernels.OPENMP``.

    Returns
    -------
    state : str
        For example ``"built with OpenMP: yes; compiled: yes"``.
    """
    return f"built with OpenMP: {'yes' if openmp else 'no'}; compiled: {'yes' if compiled else 'no'}"


def _dependencies_info():
    info = {"skssl": __version__}
    for name in _DEPENDENCIES:
        try:
            info[name] = version(name)
        except PackageNotFoundError:
            info[name] = None
    return info


def _threadpool_info():
    if importlib.util.find_spec("torch") is not None:
        try:
            import torch  # noqa: F401  (loads torch's OpenMP runtime so that it is listed)
        except Exception:  # a broken torch must not break the bug report
            pass
    return threadpool_info()


def show_versions():
    """Print skssl's version, its dependencies' versions and the BLAS/OpenMP thread pools.

    Paste the output into a bug report. It lists the system (Python, platform),
    whether skssl's compiled CSR kernel is built and whether it was built with
    OpenMP (``kernel openmp: built with OpenMP: yes; compiled: yes``; without
    OpenMP, ``n_jobs > 1`` does not split a problem's work over threads), the
    installed versions of skssl, numpy, scipy, scikit-learn, torch, skorch
    and the other packages skssl works with (``None`` when absent), and the
    thread pools found by :func:`threadpoolctl.threadpool_info` (library,
    version, number of threads), which decide how fast the solvers and nets run.

    See Also
    --------
    sklearn.show_versions : The same report for scikit-learn.

    Examples
    --------
    >>> import skssl
    >>> skssl.show_versions()  # doctest: +SKIP
    """
    print("\nSystem:")
    for key, value in _system_info().items():
        print(f"{key:>13}: {value}")
    print("\nPython dependencies:")
    for key, value in _dependencies_info().items():
        print(f"{key:>13}: {value}")
    pools = _threadpool_info()
    print("\nthreadpoolctl info:")
    if not pools:
        print("  no BLAS or OpenMP library loaded")
    for i, pool in enumerate(pools):
        if i:
            print()
        for key, value in pool.items():
            print(f"{key:>15}: {value}")
