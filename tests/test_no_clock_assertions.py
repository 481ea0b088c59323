"""No test reads a clock: the suite bounds work by counts, never by elapsed time.

A test that asserts a fit took less than some seconds fails on a busy machine
and passes on a fast one whatever the code does. Tests bound work by what they
can count instead: ``n_iter_``, the events of
:func:`skssl.svm._callback.solver_callback`, or a counter around a solver.
This module scans the source of every test module (and the doctests of
``skssl``) and fails on any reading of a clock: ``time.perf_counter``,
``time.time``, ``time.process_time``, ``time.monotonic`` (and their ``_ns``
forms), ``time.thread_time``, ``timeit`` and ``datetime.now``. Sleeping
(``time.sleep``) reads no clock and is allowed. A helper file that has a
real need to read a clock without asserting on it goes in :data:`ALLOWED`,
with the reason.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The ``time`` functions that read a clock.
TIME_CLOCKS = frozenset(
    {
        "perf_counter",
        "perf_counter_ns",
        "time",
        "time_ns",
        "process_time",
        "process_time_ns",
        "monotonic",
        "monotonic_ns",
        "thread_time",
        "thread_time_ns",
        "clock_gettime",
        "clock_gettime_ns",
    }
)

#: Test files allowed to read a clock, each with the reason (paths relative to the repository root). A file
#: here must not assert on what it reads.
ALLOWED = {}

#: A doctest line (``>>>`` or ``...``) that reads a clock.
_DOCTEST_CLOCK = re.compile(
    r"^\s*(>>>|\.\.\.) .*\b(time\.(" + "|".join(sorted(TIME_CLOCKS)) + r")\s*\(|timeit|datetime\.now|perf_counter)"
)


def clock_readings(source):
    """The line numbers and names of the clock readings in a module's source.

    Follows the module's imports: ``import time as t`` then ``t.monotonic()``, and
    ``from time import perf_counter as pc``, are found; so is any use of ``timeit`` and of ``datetime.now``.
    """
    tree = ast.parse(source)
    time_modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "time":
                    time_modules.add(alias.asname or "time")
                elif alias.name == "timeit":
                    found.append((node.lineno, "timeit"))
        elif isinstance(node, ast.ImportFrom):
            if node.module == "time":
                found += [(node.lineno, f"time.{a.name}") for a in node.names if a.name in TIME_CLOCKS]
            elif node.module == "timeit":
                found.append((node.lineno, "timeit"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in time_modules and node.attr in TIME_CLOCKS:
                found.append((node.lineno, f"time.{node.attr}"))
        if isinstance(node, ast.Attribute) and node.attr in {"now", "utcnow"}:
            base = node.value
            if (isinstance(base, ast.Name) and base.id == "datetime") or (
                isinstance(base, ast.Attribute) and base.attr == "datetime"
            ):
                found.append((node.lineno, f"datetime.{node.attr}"))
    return sorted(found)


def _test_files():
    return sorted(p for p in (ROOT / "tests").rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_module_reads_a_clock(path):
    relative = str(path.relative_to(ROOT))
    if relative in ALLOWED:
        return
    found = clock_readings(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{relative} reads a clock at {found}: bound the work by a count (n_iter_, solver_callback events) "
        "instead of elapsed time, or list a helper that does not assert on it in ALLOWED with the reason"
    )


def test_no_doctest_reads_a_clock():
    found = [
        f"{path.relative_to(ROOT)}:{lineno}"
        for path in sorted((ROOT / "skssl").rglob("*.py"))
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _DOCTEST_CLOCK.match(line)
    ]
    assert not found, f"doctests read a clock at {found}"


def test_allowed_files_exist_and_give_a_reason():
    for relative, reason in ALLOWED.items():
        assert (ROOT / relative).is_file(), relative
        assert reason.strip(), relative


@pytest.mark.parametrize(
    "source, names",
    [
        ("import time\nt0 = time.perf_counter()\nassert time.perf_counter() - t0 < 5.0\n", ["time.perf_counter"] * 2),
        ("import time as t\nx = t.monotonic()\n", ["time.monotonic"]),
        ("from time import process_time as cpu\n", ["time.process_time"]),
        ("import time\nstart = time.time()\n", ["time.time"]),
        ("import timeit\n", ["timeit"]),
        ("from datetime import datetime\nnow = datetime.now()\n", ["datetime.now"]),
        ("import datetime\nnow = datetime.datetime.utcnow()\n", ["datetime.utcnow"]),
        ("import time\ntime.sleep(0.05)\n", []),
        ("from time import sleep\nsleep(1)\n", []),
        ("def f(est):\n    return est.time\n", []),  # an attribute named time on something else
    ],
)
def test_the_scan_finds_clock_readings(source, names):
    assert [name for _, name in clock_readings(source)] == names


def test_the_doctest_scan_finds_clock_readings():
    assert _DOCTEST_CLOCK.match("    >>> t0 = time.perf_counter()")
    assert _DOCTEST_CLOCK.match("    ... elapsed = time.monotonic() - t0")
    assert not _DOCTEST_CLOCK.match("    >>> time.sleep(0)")
    assert not _DOCTEST_CLOCK.match("    t0 = time.perf_counter()  # code, not a doctest")
