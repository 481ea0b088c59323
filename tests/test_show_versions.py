"""Tests of skssl.show_versions and of the single source of the version."""

import re
import tomllib
from pathlib import Path

import pytest

import skssl


def test_show_versions_lists_dependencies_and_thread_pools(capsys):
    skssl.show_versions()
    out = capsys.readouterr().out
    assert f"skssl: {skssl.__version__}" in out
    assert "csr kernel: compiled" in out
    for name in ("python", "numpy", "scipy", "scikit-learn", "torch", "skorch", "threadpoolctl info"):
        assert re.search(rf"^\s*{name}:", out, flags=re.MULTILINE), name
    # numpy is loaded, so at least its BLAS pool is listed with its thread count.
    assert re.search(r"user_api: blas", out) and re.search(r"num_threads: \d+", out)


def test_version_is_written_once():
    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["dynamic"]
    assert dynamic["version"] == {"attr": "skssl._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", skssl.__version__)


def _openmp_line(out):
    match = re.search(r"^\s*kernel openmp: (.*)$", out, flags=re.MULTILINE)
    assert match, out
    return match.group(1)


def test_show_versions_reports_the_kernels_openmp_build(capsys):
    from skssl.svm.kernels import _kernels

    skssl.show_versions()
    line = _openmp_line(capsys.readouterr().out)
    openmp = "yes" if _kernels.OPENMP else "no"
    assert line == f"built with OpenMP: {openmp}; compiled: yes"
    # The flag comes from the compiled module itself, not from a guess about the platform.
    from skssl.svm import _csr_kernels

    assert _kernels.OPENMP is _csr_kernels.OPENMP


@pytest.mark.parametrize(
    ("compiled", "openmp", "expected"),
    [(True, False, "no; compiled: yes"), (False, False, "no; compiled: no"), (True, True, "yes; compiled: yes")],
)
def test_show_versions_follows_the_openmp_flag(compiled, openmp, expected, capsys, monkeypatch):
    from skssl import _show_versions

    monkeypatch.setattr(_show_versions, "_kernel_build", lambda: (compiled, openmp))
    skssl.show_versions()
    assert _openmp_line(capsys.readouterr().out) == f"built with OpenMP: {expected}"


def test_show_versions_reports_kernels_that_cannot_be_imported(capsys, monkeypatch):
    # A source tree whose extension was never built: skssl.svm raises ImportError, show_versions still reports.
    import sys

    from skssl import _show_versions

    monkeypatch.setitem(sys.modules, "skssl.svm.kernels._kernels", None)  # import of it raises ImportError
    assert _show_versions._kernel_build() == (False, False)
    skssl.show_versions()
    out = capsys.readouterr().out
    assert "csr kernel: not built" in out
    assert _openmp_line(out) == "built with OpenMP: no; compiled: no"
