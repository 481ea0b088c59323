"""The pieces every script in ``benchmarks/`` shares, one home for each job (``benchmarks/README.md``).

Where a table goes: :class:`ResultsFile` (``_results.py``); what it says about its run: :func:`provenance`; time
and memory (the resident set's high-water mark, ``VmHWM``) of a fit: :func:`timed` here, :func:`run_in_child` in
a fresh process; rows and tables: :func:`append_jsonl` / :func:`read_jsonl`, :func:`markdown_table` /
:func:`table_head`, :class:`Lines`; sections rerun alone (``--only``): :func:`sections_text`,
:func:`merge_sections`, :func:`finish_sections`.

Scripts run as ``python benchmarks/NAME.py`` with skssl importable; Python puts their folder first on
``sys.path``, so ``from _harness import ...`` needs no path patch, there or in the children of :func:`run_in_child`.
"""

import contextlib
import gc
import importlib.util
import json
import os
import pickle
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from _results import (  # noqa: F401 - the rule, re-exported here
    DIRTY_MARK,
    RESULTS_DIR,
    ResultsFile,
    ResultsRefused,
    add_allow_dirty,
    check_publishable,
    git_state,
    partial_path,
    shown_path,
)

ROOT = Path(__file__).resolve().parents[1]
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")

# --------------------------------------------------------------------------- provenance


def command_line(args=None):
    """The command that reproduces this run from the repository root: thread variables that are set,
    ``python benchmarks/NAME.py`` and the quoted ``args`` (``None``: ``sys.argv[1:]``)."""
    script = Path(sys.argv[0]).resolve()
    with contextlib.suppress(ValueError):
        script = script.relative_to(ROOT)
    args = sys.argv[1:] if args is None else list(args)
    env = [f"{k}={os.environ[k]}" for k in THREAD_VARS if k in os.environ]
    return shlex.join([*env, "python", str(script), *args])


def git_revision():
    """Short commit of the benchmarked tree, followed by ``DIRTY_MARK`` when it has uncommitted changes outside
    ``benchmarks/results/`` (``?`` without git); :class:`ResultsFile` refuses to commit-write such a table."""
    rev, dirty = git_state()
    return f"{rev} {DIRTY_MARK}" if dirty else rev


def versions():
    """Python and the versions of the libraries a figure depends on (torch when it is imported)."""
    import numpy
    import scipy
    import sklearn

    parts = [f"Python {platform.python_version()}", f"numpy {numpy.__version__}", f"scipy {scipy.__version__}"]
    parts.append(f"scikit-learn {sklearn.__version__}")
    if "torch" in sys.modules:
        parts.append(f"torch {sys.modules['torch'].__version__}")
    return ", ".join(parts)


def machine():
    """Architecture, CPU count and the 1-minute load average now (how busy the machine was)."""
    return f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"


def provenance(args=None):
    """The paragraph every results file opens with (``args``: the script's arguments, ``None``: ``sys.argv[1:]``):
    ``Command: `...`; git ...; YYYY-MM-DD HH:MM UTC; versions; machine.`` (no trailing newline)."""
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"Command: `{command_line(args)}`; skssl at git {git_revision()}; {date}; {versions()}; {machine()}."


def reductions(args, **full):
    """How the run of the parsed ``args`` leaves out part of the full run (:class:`ResultsFile`'s ``reduced``).

    ``full`` gives the full run's value of each option that can reduce it: a number (less is reduced), a
    string (another value is), a list (a value that is not a superset is), ``False`` or ``None`` (a flag or
    an option whose use is reduced). Returns ``--option value (full run: ...)`` for each reducing option.
    """
    out = []
    for name, value_full in full.items():
        value, flag = getattr(args, name), "--" + name.replace("_", "-")
        shown = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        if value_full is None or isinstance(value_full, bool):
            out += [flag if value is True else f"{flag} {shown}"] if value else []
        elif isinstance(value_full, (list, tuple)):
            if not set(value) >= set(value_full):
                out.append(f"{flag} {shown} (full run: {' '.join(map(str, value_full))})")
        elif value < value_full if isinstance(value_full, (int, float)) else value != value_full:
            out.append(f"{flag} {shown} (full run: {value_full})")
    return out


# --------------------------------------------------------------------------- timing and memory


@dataclass
class Timing:
    """What :func:`timed` measured: seconds, and megabytes when it was asked to.

    ``cpu`` is the process's CPU time (all its threads), ``peak_rss_mb`` the high-water mark of the
    resident set during the block and ``rss_growth_mb`` that peak minus the resident set before it.
    """

    wall: float = float("nan")
    cpu: float = float("nan")
    peak_rss_mb: float = None
    rss_growth_mb: float = None


def peak_rss_mb(pid="self"):
    """High-water mark of the resident set (``VmHWM``) of a process, in MB, or None when unreadable.

    Unlike ``ru_maxrss``, which on Linux keeps the peak of the forked parent from before ``exec``,
    ``VmHWM`` belongs to the program's own address space.
    """
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _rss_mb():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return None


def _reset_peak_rss():
    # Linux >= 4.0: the high-water mark restarts from the current resident set.
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as f:
        f.write("5")


@contextlib.contextmanager
def timed(memory=False):
    """Time the ``with`` block: yields a :class:`Timing`, filled in when the block ends (even when it raises).

    With ``memory``, also its peak resident set: garbage is collected and the high-water mark reset before it.
    """
    result = Timing()
    if memory:
        gc.collect()
        _reset_peak_rss()
        before = _rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield result
    finally:
        result.cpu = time.process_time() - cpu
        result.wall = time.perf_counter() - wall
        if memory and (peak := peak_rss_mb()) is not None:  # None where /proc is not Linux's
            result.peak_rss_mb, result.rss_growth_mb = peak, max(0.0, peak - before)


class ChildError(RuntimeError):
    """A function run by :func:`run_in_child` raised, or its process died or ran out of time."""


def child_env(threads=None, pythonpath=None):
    """The environment of a child process.

    ``threads``: ``None`` keeps the user's thread variables; ``0`` removes them all (the default threads of
    a user who sets none); ``n > 0`` sets them all to ``n``. ``pythonpath``: where the child imports skssl
    from (``None``: where this process imports it from).
    """
    env = dict(os.environ)
    if threads is not None:
        for k in THREAD_VARS:
            env.pop(k, None)
            if threads > 0:
                env[k] = str(threads)
    env["PYTHONPATH"] = pythonpath or os.pathsep.join(p for p in sys.path if p)
    return env


def run_in_child(func, *args, threads=None, pythonpath=None, timeout=None, **kwargs):
    """Call ``func(*args, **kwargs)`` in a fresh Python process and return what it returns.

    A fit timed there (with :func:`timed`) pays for no import, no heap and no thread pool of
    the parent, and its peak memory is its own. ``func`` must be a module-level function of a
    file (a benchmark script run as ``__main__`` is fine: the child loads the file without running
    its ``__main__`` block); arguments and result are pickled, so keep them plain (numbers, strings,
    lists, dicts, numpy arrays, paths).

    ``threads`` and ``pythonpath`` set the child's environment (:func:`child_env`); ``timeout`` is the
    seconds before the child is killed. Raises :class:`ChildError` when ``func`` raised (the message holds
    the child's traceback), or the child died or timed out.
    """
    source = Path(sys.modules[func.__module__].__file__).resolve()
    with tempfile.TemporaryDirectory(prefix="skssl-child-") as tmp:
        spec, result = Path(tmp) / "spec.pkl", Path(tmp) / "result.pkl"
        spec.write_bytes(pickle.dumps((str(source), func.__name__, args, kwargs)))
        cmd = [sys.executable, __file__, str(spec), str(result)]
        try:
            proc = subprocess.run(
                cmd, env=child_env(threads, pythonpath), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise ChildError(f"{func.__name__} did not finish within {timeout} s (child killed)") from None
        if not result.exists():
            raise ChildError(f"{func.__name__}: the child died ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        status, value = pickle.loads(result.read_bytes())
    if status == "error":
        raise ChildError(f"{func.__name__} raised in the child:\n{value}")
    return value


def _child_main(spec_path, result_path):
    """The child's side of :func:`run_in_child`: load the function's file, call it, pickle the outcome."""
    source, name, args, kwargs = pickle.loads(Path(spec_path).read_bytes())
    try:
        module_spec = importlib.util.spec_from_file_location(f"_child_{Path(source).stem}", source)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module
        module_spec.loader.exec_module(module)
        outcome = ("ok", getattr(module, name)(*args, **kwargs))
    except BaseException:  # noqa: BLE001 - every failure goes back to the parent
        outcome = ("error", traceback.format_exc())
    Path(result_path).write_bytes(pickle.dumps(outcome))


# --------------------------------------------------------------------------- rows and tables


def append_jsonl(path, row):
    """Append ``row`` (a JSON-serializable dict) as one line of the log ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")


def read_jsonl(path):
    """The rows of the log ``path``, in order (``[]`` when it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def fmt(value, spec):
    """``format(value, spec)``, or ``–`` for a figure that was not measured (``None``)."""
    return "–" if value is None else format(value, spec)


def markdown_row(cells):
    """One row of a markdown table (cells are converted with ``str``)."""
    return "| " + " | ".join(map(str, cells)) + " |"


def table_head(header):
    """The first two lines of a markdown table, for a table whose rows are printed one by one."""
    return [markdown_row(header), "|" + "---|" * len(header)]


def markdown_table(header, rows):
    """A markdown table of ``header`` (column titles) and ``rows`` (as many cells as columns), with a final newline."""
    lines = table_head(header)
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row has {len(row)} cells for {len(header)} columns: {row}")
        lines.append(markdown_row(row))
    return "\n".join(lines) + "\n"


class Lines(list):
    """The lines of a results file, each printed as it is added (a long run shows its progress)."""

    def __call__(self, *lines):
        """Add ``lines`` (no argument: one empty line)."""
        for line in lines or ("",):
            print(line, flush=True)
            self.append(line)

    def text(self):
        """The lines joined, with a final newline."""
        return "\n".join(self) + "\n"


_MARK = "<!-- section: {} -->\n"


def sections_text(header, sections):
    """A results file made of sections that can be rerun alone: ``header``, then each marked section."""
    return header + "\n".join(_MARK.format(key) + text.rstrip() + "\n" for key, text in sections.items())


def merge_sections(path, new, order):
    """The sections of the file ``path`` (written by :func:`sections_text`; a missing file has none) with
    those of ``new`` replaced: ``{key: text}`` in ``order`` (every section key, in the order of the file)."""
    path = Path(path)
    old = {}
    if path.exists():
        for part in path.read_text().split("<!-- section: ")[1:]:
            key, _, body = part.partition(" -->\n")
            old[key] = body
    old.update(new)
    return {key: old[key] for key in order if key in old}


def finish_sections(results, header, sections, order, only=None):
    """Write a sectioned table through ``results`` (a :class:`ResultsFile`) and print it.

    A complete ``--only`` run (``only``) keeps the committed file's other sections. Returns the path
    written, or ``None`` (file untouched) when no section was run.
    """
    if not sections:
        print("nothing was run; results file left unchanged")
        return None
    if only and results.complete:
        sections = merge_sections(results.default, sections, order)
    path = results.finish(sections_text(header, sections))
    print(path.read_text())
    return path


if __name__ == "__main__":
    _child_main(*sys.argv[1:3])
