"""Where a benchmark writes its table: the complete/partial rule of ``benchmarks/README.md``, in one place.

A file in ``benchmarks/results/`` is replaced only by a complete run; any other run writes
``<name>.partial.md`` beside it (git-ignored) with a banner saying why. ``--out PATH`` is honoured for a run
reduced on purpose, never for one that lacked data or measured figures.

What a complete run writes can be committed, so it must be reproducible from the repository:
:func:`check_publishable` refuses a table that names an absolute path outside the repository (a scratch
log nobody else has; ``../shared/...``, the documented data location beside the repository, is fine) or that
was measured on a tree with uncommitted changes (:func:`git_state`; changes under ``benchmarks/results/``
do not count) or on a skssl imported from another tree (:func:`imported_skssl`). ``--allow-dirty``
(:func:`add_allow_dirty`) lets a development run write anyway, and the table then carries
:data:`DIRTY_MARK`, which no committed results file may hold.
"""

import contextlib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"
PARTIAL = ".partial"
DIRTY_MARK = "with UNCOMMITTED CHANGES (a development run)"
# An absolute path: "/" starting a token (not inside a URL, a fraction or a relative path), then a name.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?=[A-Za-z_.])[\w.+-]+(?:/[\w.+-]*)*")

__all__ = [
    "DIRTY_MARK",
    "RESULTS_DIR",
    "ROOT",
    "ResultsFile",
    "ResultsRefused",
    "add_allow_dirty",
    "check_publishable",
    "foreign_paths",
    "git_state",
    "imported_skssl",
    "partial_path",
    "shown_path",
]


class ResultsRefused(RuntimeError):
    """A complete run's table that could not be reproduced from the repository; nothing was written."""


def git_state(root=None):
    """``(short commit, dirty)`` of the tree at ``root``; ``("?", False)`` without git or outside a checkout.

    ``dirty`` is whether tracked files outside ``benchmarks/results/`` differ from the commit (a run that
    appends to a committed log there does not make its own tree dirty).
    """
    root = ROOT if root is None else root
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results"],
            cwd=root,
            capture_output=True,
            text=True,
        )
    except OSError:
        return "?", False
    if rev.returncode != 0:
        return "?", False
    return rev.stdout.strip(), bool(status.stdout.strip())


def shown_path(path, root=None):
    """How a table names ``path``: relative to the repository, ``../shared/...`` beside it, else absolute
    (which :func:`check_publishable` then refuses)."""
    path = Path(path).resolve()
    root = Path(ROOT if root is None else root).resolve()
    with contextlib.suppress(ValueError):
        return path.relative_to(root).as_posix()
    with contextlib.suppress(ValueError):
        return (Path("..") / "shared" / path.relative_to(root.parent / "shared")).as_posix()
    return str(path)


def foreign_paths(text, root=None):
    """The absolute paths in ``text`` that lie outside the repository at ``root``."""
    root = Path(ROOT if root is None else root).resolve()
    out = []
    for match in ABSOLUTE_PATH.finditer(text):
        path = Path(match.group(0).rstrip("."))
        try:
            path.resolve().relative_to(root)
        except ValueError:
            out.append(match.group(0))
    return out


def imported_skssl():
    """The file of the ``skssl`` package this process imported, or ``None`` before any import of it."""
    module = sys.modules.get("skssl")
    return Path(module.__file__).resolve() if module is not None and module.__file__ else None


def check_publishable(text, *, allow_dirty=False, root=None):
    """Return ``text`` as it may be written to a results file, or raise :class:`ResultsRefused`.

    Refused: an absolute path outside the repository (always); for this repository (``root`` None), a run that
    imported skssl from another tree; and a tree with uncommitted changes (now or when the provenance was
    written, :data:`DIRTY_MARK`) unless ``allow_dirty``, which marks the text.
    """
    foreign = foreign_paths(text, root)
    if foreign:
        raise ResultsRefused(
            "the table names paths outside the repository, which nobody else can read: "
            + ", ".join(sorted(set(foreign)))
            + ". Write logs and --out files inside the repository (benchmarks/results/) and merge committed logs."
        )
    imported = imported_skssl()
    if root is None and imported is not None and not imported.is_relative_to(ROOT):
        raise ResultsRefused(
            f"the run measured the skssl at {imported.parent}, not this repository's ({ROOT / 'skssl'}): its "
            "figures belong to another tree. Run from the repository root with PYTHONPATH=. (or install this "
            "checkout with pip install -e .)."
        )
    rev, dirty = git_state(root)
    if (dirty or DIRTY_MARK in text) and not allow_dirty:
        raise ResultsRefused(
            f"the tree at {rev} has uncommitted changes outside benchmarks/results/: a table measured on it "
            "cannot be reproduced from a commit. Commit first, or pass --allow-dirty for a development run "
            "(its table is marked and must not be committed)."
        )
    if dirty and DIRTY_MARK not in text:
        text = f"> **skssl at git {rev} {DIRTY_MARK}.**\n\n" + text
    return text


def add_allow_dirty(parser):
    """Give a script's ``parser`` the ``--allow-dirty`` flag (for :class:`ResultsFile`'s ``allow_dirty``)."""
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="write the table even though the tree has uncommitted changes (development runs; the table is marked "
        "and must not be committed)",
    )
    return parser


def partial_path(path):
    """``results/x.md`` -> ``results/x.partial.md`` (a partial path is returned unchanged)."""
    path = Path(path)
    if path.stem.endswith(PARTIAL):
        return path
    return path.with_name(f"{path.stem}{PARTIAL}{path.suffix}")


class ResultsFile:
    """The table one run writes, and whether the run may replace the committed file.

    ``default`` is the file a complete run writes (``results/<script>.md``); ``out`` the user's ``--out``
    (``None`` or the default path itself: the default); ``reduced`` how the run was reduced on purpose
    (``"--quick"``, ``"--repeats 1 (full run: 3)"``); ``allow_dirty`` the script's ``--allow-dirty``
    (:func:`check_publishable`, applied to what a complete run writes); ``root`` the repository whose state
    and paths are checked (default: this one). A run that would be complete on a tree with uncommitted
    changes is refused here, before it measures anything, unless ``allow_dirty``.
    """

    def __init__(self, default, out=None, *, reduced=(), allow_dirty=False, root=None):
        self.default = Path(default)
        self.allow_dirty = bool(allow_dirty)
        self.root = root
        explicit = out is not None and Path(out).resolve() != self.default.resolve()
        self.target = Path(out) if explicit else self.default
        self.explicit = explicit
        self.reduced = [str(r) for r in reduced]
        self.degraded = []
        rev, dirty = git_state(self.root)
        if dirty and self.complete and not self.allow_dirty:
            raise ResultsRefused(
                f"the tree at {rev} has uncommitted changes outside benchmarks/results/, so this run could not "
                f"replace {self.target.name}: commit first, or pass --allow-dirty for a development run (its table "
                "is marked and must not be committed)"
            )

    def degrade(self, reason):
        """Record that data or a measurement was missing (the run can no longer be complete)."""
        self.degraded.append(str(reason))

    @contextlib.contextmanager
    def skipping(self, what):
        """Run the ``with`` block; where it lacks a data set (``DatasetUnavailableError``), say so and degrade."""
        from skssl.datasets import DatasetUnavailableError

        try:
            yield
        except DatasetUnavailableError as exc:
            print(f"skipping {what}: {exc}", flush=True)
            self.degrade(f"{what} skipped ({str(exc).splitlines()[0]})")

    @property
    def reasons(self):
        """Why the run is partial; empty for a complete run."""
        return self.degraded + ([] if self.explicit else self.reduced)

    @property
    def complete(self):
        return not self.reasons

    @property
    def partial(self):
        return partial_path(self.target)

    def _banner(self, note):
        return (
            f"> **{note}: not the committed results.** `{self.target.name}` is replaced only by a complete "
            "run (see `benchmarks/README.md`). This run: " + "; ".join(self.reasons or ["still running"]) + ".\n\n"
        )

    def save_progress(self, text):
        """Write an unfinished table to the partial file (a run stopped early keeps its rows)."""
        self.partial.parent.mkdir(parents=True, exist_ok=True)
        self.partial.write_text(self._banner("Run in progress or stopped early") + text)
        return self.partial

    def finish(self, text):
        """Write the finished table where the rule says; return the path written."""
        if self.complete:
            text = check_publishable(text, allow_dirty=self.allow_dirty, root=self.root)
            self.target.parent.mkdir(parents=True, exist_ok=True)
            self.target.write_text(text)
            if self.partial.exists():
                self.partial.unlink()
            print(f"written to {self.target}", file=sys.stderr)
            return self.target
        self.partial.parent.mkdir(parents=True, exist_ok=True)
        self.partial.write_text(self._banner("Partial run") + text)
        print(
            f"partial run ({'; '.join(self.reasons)}): written to {self.partial}; {self.target} is unchanged",
            file=sys.stderr,
        )
        return self.partial
