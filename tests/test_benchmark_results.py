"""The rule of benchmarks/README.md: only a complete run replaces a file in benchmarks/results/, and what it
writes there (and what the docs quote) names nothing outside the repository and no tree with uncommitted
changes."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ._benchmarks import BENCHMARKS, load_benchmark

REPO = BENCHMARKS.parent
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def rf(tmp_path, monkeypatch):
    """The results writer, checking ``tmp_path`` (no git checkout: never dirty) as its repository."""
    module = load_benchmark("_results")
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "imported_skssl", lambda: tmp_path / "skssl" / "__init__.py")  # its own skssl
    return module


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


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A git checkout with one committed source file and a committed results file."""
    root = tmp_path / "repo"
    (root / "benchmarks" / "results").mkdir(parents=True)
    (root / "code.py").write_text("x = 1\n")
    (root / "benchmarks" / "results" / "bench.md").write_text("committed table\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    return root


@needs_git
def test_a_complete_run_on_a_tree_with_uncommitted_changes_is_refused_before_it_runs(rf, repo):
    table = repo / "benchmarks" / "results" / "bench.md"
    (table.parent / "log.jsonl").write_text("a row\n")  # a run's own log does not make the tree dirty
    table.write_text("rewritten mid-run\n")
    assert rf.git_state(repo)[1] is False
    (repo / "code.py").write_text("x = 2\n")
    assert rf.git_state(repo)[1] is True
    with pytest.raises(rf.ResultsRefused, match="uncommitted changes.*--allow-dirty"):
        rf.ResultsFile(table, root=repo)
    partial = rf.ResultsFile(table, reduced=["--quick"], root=repo)  # a partial run is a development run anyway
    assert partial.finish("quick\n") == table.with_name("bench.partial.md")


@needs_git
def test_allow_dirty_writes_a_marked_table(rf, repo):
    table = repo / "benchmarks" / "results" / "bench.md"
    (repo / "code.py").write_text("x = 2\n")
    results = rf.ResultsFile(table, allow_dirty=True, root=repo)
    assert results.finish("new table\n") == table
    assert rf.DIRTY_MARK in table.read_text() and table.read_text().endswith("new table\n")


@needs_git
def test_a_table_whose_provenance_was_written_on_a_dirty_tree_is_refused(rf, repo):
    table = repo / "benchmarks" / "results" / "bench.md"
    results = rf.ResultsFile(table, root=repo)  # clean now, but the run's provenance says it was not
    with pytest.raises(rf.ResultsRefused, match="uncommitted"):
        results.finish(f"skssl at git abc1234 {rf.DIRTY_MARK}\n")
    assert table.read_text() == "committed table\n"


def test_provenance_marks_a_dirty_tree(monkeypatch):
    h = load_benchmark("_harness")
    monkeypatch.setattr(h, "git_state", lambda root=None: ("abc1234", True))
    assert h.git_revision() == f"abc1234 {h.DIRTY_MARK}"
    monkeypatch.setattr(h, "git_state", lambda root=None: ("abc1234", False))
    assert h.git_revision() == "abc1234"


def test_a_table_naming_a_path_outside_the_repository_is_refused(rf, committed, tmp_path):
    outside = "/work/scratch/s44/pd_status.jsonl"
    with pytest.raises(rf.ResultsRefused, match=re.escape(outside)):
        rf.ResultsFile(committed).finish(f"Command: `python benchmarks/x.py --out {outside}`\n")
    assert committed.read_text() == "committed table\n"
    inside = f"`{tmp_path / 'results' / 'bench.jsonl'}`, `../shared/data`, https://example.org/a/b, 1/2\n"
    assert rf.ResultsFile(committed).finish(inside) == committed


def test_shown_path_is_relative_to_the_repository_or_to_the_shared_folder_beside_it(rf, tmp_path):
    assert rf.shown_path(tmp_path / "benchmarks" / "results" / "a.jsonl") == "benchmarks/results/a.jsonl"
    assert rf.shown_path(tmp_path.parent / "shared" / "data") == "../shared/data"
    assert rf.shown_path("/elsewhere/a.jsonl") == "/elsewhere/a.jsonl"
    assert rf.foreign_paths("`/elsewhere/a.jsonl`") == ["/elsewhere/a.jsonl"]


def _published():
    """The committed files that quote or hold results: benchmarks/results/, docs/ and README.md."""
    files = [REPO / "README.md", *sorted((REPO / "benchmarks" / "results").glob("*"))]
    for ext in ("rst", "md", "txt", "py", "html"):
        files += sorted((REPO / "docs").rglob(f"*.{ext}"))
    skip = ("_build", "auto_examples", "generated", "_generated")
    return [f for f in files if f.is_file() and not f.name.count(".partial.") and not set(f.parts) & set(skip)]


FOREIGN = re.compile(r"(?<![\w.:/~-])/(?:work|tmp|home|root|scratch|mnt|Users|var)/[^\s`'\")\]]*")
DIRTY = re.compile(r"\bgit [0-9a-f]{6,40}\+|\bcommit [0-9a-f]{6,40} with local edits")


@pytest.mark.parametrize("path", _published(), ids=lambda p: str(p.relative_to(REPO)))
def test_committed_results_and_docs_name_nothing_outside_the_repository(rf, path):
    """No scratch path nobody else has (``../shared/data``, the documented data location beside the
    repository, is the one place outside it a file may name), and no run on a tree with uncommitted changes."""
    text = path.read_text(errors="replace")
    lines = text.splitlines()

    def where(match):
        n = text.count("\n", 0, match.start())
        return f"line {n + 1}: {lines[n][:120]}"

    bad = [where(m) for m in FOREIGN.finditer(text) if not Path(m.group(0)).is_relative_to(REPO)]
    bad += [where(m) for m in re.finditer(r"\.\./shared/(?!data\b)\S*", text)]
    assert not bad, f"{path.name} names paths outside the repository:\n" + "\n".join(bad)
    dirty = [where(m) for m in DIRTY.finditer(text)]
    dirty += [where(m) for m in re.finditer(re.escape(rf.DIRTY_MARK), text)]
    assert not dirty, f"{path.name} holds results of a tree with uncommitted changes:\n" + "\n".join(dirty)


def test_a_run_that_imported_skssl_from_another_tree_is_refused(rf, committed, monkeypatch, tmp_path):
    """The commit a table names is this repository's: figures of an skssl installed from elsewhere are not."""
    elsewhere = tmp_path.parent / "other-checkout" / "skssl" / "__init__.py"  # outside the repository (tmp_path)
    monkeypatch.setattr(rf, "imported_skssl", lambda: elsewhere)
    with pytest.raises(rf.ResultsRefused, match="other-checkout"):
        rf.ResultsFile(committed).finish("Command: `python benchmarks/x.py`\n")
    monkeypatch.setattr(rf, "imported_skssl", lambda: rf.ROOT / "skssl" / "__init__.py")
    assert rf.ResultsFile(committed).finish("Command: `python benchmarks/x.py`\n") == committed
