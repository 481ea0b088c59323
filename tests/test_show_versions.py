"""Tests of skssl.show_versions and of the single source of the version."""

import re
import tomllib
from pathlib import Path

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
    assert dynamic["version"] == {"attr": "skssl.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", skssl.__version__)
