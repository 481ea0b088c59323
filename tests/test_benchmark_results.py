"""The rule of benchmarks/README.md: only a complete run replaces a file in benchmarks/results/."""

import shutil
import subprocess
from pathlib import Path

import pytest

from ._benchmarks import BENCHMARKS, load_benchmark


@pytest.fixture
def rf():
    return load_benchmark("_results")


@pytest.fixture
def committed(tmp_path):
    path = tmp_path / "results" / "bench.md"
    path.parent.mkdir()
    path.write_text("committed table\n")
    return path


def test_complete_run_replaces_the_file_and_removes_a_stale_partial(rf, committed):
    stale = committed.with_name("bench.partial.md")
    stale.write_text("old partial\n")
    results = rf.ResultsFile(committed)
    assert results.complete
    assert results.finish("new table\n") == committed
    assert committed.read_text() == "new table\n"
    assert not stale.exists()


@pytest.mark.parametrize("kind", ["reduced", "degraded"])
def test_partial_run_never_touches_the_committed_file(rf, committed, kind):
    results = rf.ResultsFile(committed, reduced=["--repeats 1 (full run: 3)"] if kind == "reduced" else [])
    if kind == "degraded":
        results.degrade("20NG rows skipped: not found")
    assert not results.complete
    written = results.finish("two rows\n")
    assert written == committed.with_name("bench.partial.md")
    assert committed.read_text() == "committed table\n"
    text = written.read_text()
    assert text.startswith("> **Partial run: not the committed results.**")
    assert ("--repeats 1" if kind == "reduced" else "20NG rows skipped") in text
    assert text.endswith("two rows\n")


def test_progress_goes_to_the_partial_file_only(rf, committed):
    results = rf.ResultsFile(committed)
    results.save_progress("first row\n")
    assert committed.read_text() == "committed table\n"
    assert "first row" in committed.with_name("bench.partial.md").read_text()
    results.finish("all rows\n")
    assert committed.read_text() == "all rows\n"
    assert not committed.with_name("bench.partial.md").exists()


def test_explicit_out_is_honoured_for_a_reduced_run_but_not_for_a_degraded_one(rf, committed, tmp_path):
    variant = tmp_path / "results" / "bench_l100.md"
    results = rf.ResultsFile(committed, variant, reduced=["--configs 100:0"])
    assert results.finish("variant\n") == variant
    results = rf.ResultsFile(committed, variant, reduced=["--configs 100:0"])
    results.degrade("SVMlin not built: recorded reference figures")
    assert results.finish("fallback\n") == tmp_path / "results" / "bench_l100.partial.md"
    assert variant.read_text() == "variant\n"


def test_out_naming_the_default_file_is_not_a_way_around_the_rule(rf, committed):
    results = rf.ResultsFile(committed, str(committed), reduced=["--quick"])
    assert results.finish("quick\n") == committed.with_name("bench.partial.md")
    assert committed.read_text() == "committed table\n"


def test_partial_path(rf):
    assert rf.partial_path("a/b.md") == Path("a/b.partial.md")
    assert rf.partial_path("a/b.partial.md") == Path("a/b.partial.md")


def test_linear_vs_svmlin_reductions():
    lvs = load_benchmark("linear_vs_svmlin")
    assert lvs.reductions(lvs.parse_args([])) == []
    assert lvs.reductions(lvs.parse_args(["../shared/data"])) == []
    for argv, word in [
        (["--quick"], "--quick"),
        (["--repeats", "1"], "--repeats 1"),
        (["--methods", "TSVM"], "--methods"),
        (["--no-20ng"], "--no-20ng"),
        (["--configs", "100:0"], "--configs"),
        (["--reuters", "r.tgz"], "--reuters"),
    ]:
        assert any(word in r for r in lvs.reductions(lvs.parse_args(argv))), argv


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_partial_files_are_ignored_by_git():
    root = BENCHMARKS.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(
        ["git", "check-ignore", "-q", "benchmarks/results/linear_vs_svmlin.partial.md"], cwd=root, check=False
    )
    assert proc.returncode == 0


def test_a_missing_data_set_is_skipped_and_makes_the_run_partial(rf, committed, capsys):
    from skssl.datasets import DatasetUnavailableError

    results = rf.ResultsFile(committed)
    with results.skipping("20 Newsgroups"):
        raise DatasetUnavailableError("20news-bydate.tgz not found\nsecond line")
    assert not results.complete
    assert results.reasons == ["20 Newsgroups skipped (20news-bydate.tgz not found)"]
    assert "skipping 20 Newsgroups" in capsys.readouterr().out
    with pytest.raises(ValueError), results.skipping("other"):
        raise ValueError("not a missing data set")
