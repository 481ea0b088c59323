"""Loading a benchmark script as a module, for the tests of benchmarks/ (skipped where it is not shipped)."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name):
    """``benchmarks/<name>.py`` as a fresh module (its sibling modules importable while it loads)."""
    if not BENCHMARKS.is_dir():
        pytest.skip("benchmarks/ is not part of this installation")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def as_repository(path, monkeypatch):
    """Make ``path`` the repository the results writer checks (``benchmarks/_results.py``): not a git
    checkout, so never dirty, and holding the logs and tables a test writes there. Returns ``path``."""
    load_benchmark("_harness")
    monkeypatch.setattr(sys.modules["_results"], "ROOT", path)
    # and the skssl a run there measures is that repository's own
    monkeypatch.setattr(sys.modules["_results"], "imported_skssl", lambda: path / "skssl" / "__init__.py")
    return path
