"""The per-epoch progress line of the skssl nets (``verbose=1``).

:class:`ProgressLog` is skorch's ``PrintLog`` with ``epoch k/N``, a ``left``
column (the estimated time left), colour only on a terminal and columns as
wide as their headers.
"""

import re
import sys
import time
from numbers import Integral, Number

from skorch.callbacks import PrintLog
from skorch.utils import Ansi

__all__ = ["ProgressLog", "format_seconds"]

_MIN_WIDTH = 6
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _visible_len(text):
    """Length of ``text`` on a terminal (colour codes take no room)."""
    return len(_ANSI.sub("", str(text)))


def format_seconds(seconds):
    """A short human form of a duration: ``"7s"``, ``"2m05s"``, ``"1h03m"``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class ProgressLog(PrintLog):
    """skorch's ``PrintLog`` with ``epoch k/N``, the estimated time left, and colour only on a terminal."""

    def __init__(self, keys_ignored=None, sink=print):
        super().__init__(keys_ignored=keys_ignored, sink=sink)

    def on_train_begin(self, net, **kwargs):
        """Note where this call's epochs start and end, and start its clock."""
        self.first_epoch_ = len(net.history)  # epochs of earlier partial_fit calls
        self.last_epoch_ = self.first_epoch_ + net.max_epochs
        self.start_ = time.monotonic()
        self.color_ = self.sink is print and sys.stdout.isatty()

    def _time_left(self, epoch):
        done = epoch - self.first_epoch_
        if done <= 0:
            return ""
        per_epoch = (time.monotonic() - self.start_) / done
        return format_seconds(per_epoch * max(self.last_epoch_ - epoch, 0))

    def format_row(self, row, key, color):
        """Format one cell: ``epoch`` as ``k/N``, the others as ``PrintLog`` does (colour on a terminal only)."""
        value = row[key]
        if key == "epoch" and hasattr(self, "last_epoch_"):
            return f"{value}/{self.last_epoch_}"
        if isinstance(value, bool) or not isinstance(value, Number):
            return super().format_row(row, key, color)
        text = str(value) if isinstance(value, Integral) else format(value, self.floatfmt)
        if getattr(self, "color_", False) and row.get(key + "_best"):
            text = f"{color}{text}{Ansi.ENDC.value}"
        return text

    def _sorted_keys(self, keys):
        sorted_keys = super()._sorted_keys([k for k in keys if k != "left"])
        if "left" in keys:
            sorted_keys.append("left")
        return sorted_keys

    def table(self, row):
        """Header, rule and cells of one history row, columns two spaces apart (not tabulate's padding)."""
        if hasattr(self, "start_"):
            row = {**row, "left": self._time_left(row["epoch"])}
        headers, cells = zip(*self._yield_keys_formatted(row))
        if self.first_iteration_ or len(getattr(self, "widths_", ())) != len(headers):
            self.widths_ = [max(len(h), _visible_len(c), _MIN_WIDTH) for h, c in zip(headers, cells)]

        def line(items):
            return "  ".join(" " * (w - _visible_len(s)) + s for s, w in zip(items, self.widths_))

        return "\n".join([line(headers), "  ".join("-" * w for w in self.widths_), line(cells)])
