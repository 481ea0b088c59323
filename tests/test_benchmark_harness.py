"""The shared pieces of the benchmark scripts (benchmarks/_harness.py)."""

import importlib.util
import re
import sys

import pytest

from ._benchmarks import BENCHMARKS, load_benchmark

CHILD_FUNCTIONS = """
import os

import numpy as np

from _harness import timed


def fit_and_time(n):
    with timed(memory=True) as t:
        block = np.ones((n, 1024 * 1024 // 8))  # n MB
        block.sum()
    return {"wall": t.wall, "cpu": t.cpu, "peak": t.peak_rss_mb, "growth": t.rss_growth_mb, "pid": os.getpid()}


def fail(message):
    raise ValueError(message)


def die():
    os._exit(3)


if __name__ == "__main__":
    raise SystemExit("the child must not run this block")
"""


@pytest.fixture(scope="module")
def h():
    return load_benchmark("_harness")


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    path = tmp_path_factory.mktemp("child") / "child_functions.py"
    path.write_text(CHILD_FUNCTIONS)
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("child_functions", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["child_functions"] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    yield module
    sys.modules.pop("child_functions", None)


def test_jsonl_round_trip(h, tmp_path):
    log = tmp_path / "results" / "bench.jsonl"
    assert h.read_jsonl(log) == []
    rows = [{"method": "TSVM", "cpu_s": 1.25, "recall": [0.5, 1.0]}, {"method": "DA", "note": 'é, "quoted"'}]
    for row in rows:
        h.append_jsonl(log, row)
    assert h.read_jsonl(log) == rows
    assert log.read_text().count("\n") == 2


def test_markdown_table(h):
    text = h.markdown_table(["method", "CPU s"], [["TSVM", "1.20"], ["DA", h.fmt(None, ".2f")]])
    assert text == "| method | CPU s |\n|---|---|\n| TSVM | 1.20 |\n| DA | – |\n"
    with pytest.raises(ValueError, match="2 columns"):
        h.markdown_table(["a", "b"], [["only one"]])


def test_provenance_names_command_commit_date_versions_and_machine(h, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(BENCHMARKS / "bench.py"), "--runs", "20:1", "two words"])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    text = h.provenance()
    assert "`OMP_NUM_THREADS=1 python benchmarks/bench.py --runs 20:1 'two words'`" in text
    assert re.search(r"skssl at git (\?|[0-9a-f]{4,})( " + re.escape(h.DIRTY_MARK) + ")?;", text)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
    for name in ("Python", "numpy", "scipy", "scikit-learn", "CPUs", "load average"):
        assert name in text
    assert "--quick" in h.provenance(["--quick"])


def test_reductions_name_every_option_that_leaves_part_of_the_full_run_out(h):
    import argparse

    full = dict(repeats=3, rows=[100, 200], group="all", quick=False, only=None)
    args = argparse.Namespace(repeats=3, rows=[200, 100, 400], group="all", quick=False, only=None)
    assert h.reductions(args, **full) == []
    args = argparse.Namespace(repeats=1, rows=[100], group="dev", quick=True, only=["iris", "pcmac"])
    assert h.reductions(args, **full) == [
        "--repeats 1 (full run: 3)",
        "--rows 100 (full run: 100 200)",
        "--group dev (full run: all)",
        "--quick",
        "--only iris pcmac",
    ]


def test_timed_measures_cpu_and_memory(h):
    import mmap

    import numpy as np

    earlier = np.ones(160 * 2**20 // 8)  # a high-water mark from before the block, which must not count
    earlier.sum()
    del earlier
    with h.timed(memory=True) as t:
        # An anonymous mapping always gets fresh pages. np.ones(32 MB) may not: glibc's malloc can hand
        # back heap pages that earlier tests freed but left resident, and then the block adds no resident
        # memory at all (seen once in a whole-suite run: growth 0.0 MB).
        block = mmap.mmap(-1, 32 * 2**20)
        np.frombuffer(block, dtype=np.uint8)[:] = 1
    assert t.wall > 0 and t.cpu > 0
    assert 30 <= t.rss_growth_mb < 100  # the 32 MB touched in the block, not the earlier peak
    with h.timed() as t:
        pass
    assert t.peak_rss_mb is None and t.wall >= 0


def test_run_in_child_returns_the_childs_measurement(h, child):
    import os

    result = h.run_in_child(child.fit_and_time, 32)
    assert result["pid"] != os.getpid()
    assert result["wall"] > 0 and result["cpu"] > 0
    assert 30 <= result["growth"] <= result["peak"]


def test_run_in_child_reports_the_childs_exception(h, child):
    with pytest.raises(h.ChildError, match=r"(?s)fail raised in the child.*ValueError: bad input 42"):
        h.run_in_child(child.fail, "bad input 42")
    with pytest.raises(h.ChildError, match="died"):
        h.run_in_child(child.die)


def test_child_env_thread_variables(h, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert h.child_env()["OMP_NUM_THREADS"] == "3"
    assert "OMP_NUM_THREADS" not in h.child_env(threads=0)
    assert all(h.child_env(threads=1)[k] == "1" for k in h.THREAD_VARS)


def test_merge_sections_keeps_the_sections_not_rerun(h, tmp_path):
    path = tmp_path / "bench.md"
    path.write_text(h.sections_text("# Title\n\n", {"a": "### A\n\nold a\n\n", "b": "### B\n\nold b"}))
    merged = h.merge_sections(path, {"b": "### B\n\nnew b", "c": "### C"}, order=["c", "a", "b"])
    assert merged == {"c": "### C", "a": "### A\n\nold a\n\n", "b": "### B\n\nnew b"}
    text = h.sections_text("# Title\n\n", merged)
    assert text.startswith("# Title\n\n<!-- section: c -->\n### C\n")
    assert "old a\n\n\n" not in text  # trailing blank lines do not grow with every rerun
    assert h.merge_sections(tmp_path / "missing.md", {"a": "x"}, ["a", "b"]) == {"a": "x"}
