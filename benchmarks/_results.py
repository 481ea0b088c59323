"""Where a benchmark writes its table: the complete/partial rule of ``benchmarks/README.md``, in one place.

A file in ``benchmarks/results/`` is replaced only by a complete run; any other run writes
``<name>.partial.md`` beside it (git-ignored) with a banner saying why. ``--out PATH`` is honoured for a run
reduced on purpose, never for one that lacked data or measured figures.
"""

import contextlib
import sys
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"
PARTIAL = ".partial"

__all__ = ["RESULTS_DIR", "ResultsFile", "partial_path"]


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
    (``"--quick"``, ``"--repeats 1 (full run: 3)"``).
    """

    def __init__(self, default, out=None, *, reduced=()):
        self.default = Path(default)
        explicit = out is not None and Path(out).resolve() != self.default.resolve()
        self.target = Path(out) if explicit else self.default
        self.explicit = explicit
        self.reduced = [str(r) for r in reduced]
        self.degraded = []

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
