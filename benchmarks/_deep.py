"""What the deep benchmarks (``deep_ssl.py``, ``deep_time.py``, ``deep_long_tail.py``) share.

MNIST through :func:`skssl.datasets.fetch_mnist` (``benchmarks/README.md``, Data); the JSON-lines log and the
report built from it (:class:`Study`); images, labeled draws and the long-tailed split; a CPU timer callback;
the bare PyTorch FixMatch loop the skorch nets are compared with.

Where rows go: the committed log ``results/<name>.jsonl`` holds full schedules measured on the local MNIST
copy. A run with ``--quick`` or a shorter schedule than the default, or on OpenML's copy (whose row order
makes the seeded subsamples draw other images), appends to ``<name>.partial.jsonl`` and its ``report`` writes
``<name>.partial.md`` (both git-ignored).
"""

import argparse
import contextlib
import json
import sys

import numpy as np
from _harness import RESULTS_DIR, append_jsonl, provenance, read_jsonl, timed
from _results import add_allow_dirty, check_publishable, partial_path


def parse_args(doc, default):
    """A deep benchmark's command line: ``[--quick] [PART ...]`` (``default`` when no part is named), ``--help``
    printing the script's docstring. Each script checks its parts."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a few steps: the partial log and report")
    parser.add_argument("parts", nargs="*", default=default, metavar="PART", help=f"default: {' '.join(default)}")
    add_allow_dirty(parser)
    return parser.parse_args()


class Study:
    """One deep benchmark's log and report; ``partial()`` sends both to the git-ignored names."""

    def __init__(self, name):
        self.name, self.log, self.md = name, RESULTS_DIR / f"{name}.jsonl", RESULTS_DIR / f"{name}.md"
        self.train = self.test = None
        self.allow_dirty = False  # the script's --allow-dirty

    def partial(self, why):
        if self.log == partial_path(self.log):
            return
        self.log, self.md = partial_path(self.log), partial_path(self.md)
        print(f"{self.name}: {why}: rows go to {self.log}, not the committed log", file=sys.stderr)

    def load_mnist(self):
        """Set ``train`` and ``test`` (dicts of uint8 ``X``, n x 28 x 28, and ``y``); exit when MNIST is unavailable."""
        from skssl.datasets import DatasetUnavailableError, fetch_mnist

        try:
            data = fetch_mnist()
        except DatasetUnavailableError as exc:
            sys.exit(print(f"{self.name}: {exc}"))
        if "openml" in data.source:
            self.partial("MNIST from OpenML (no local copy)")
        self.train, self.test = {"X": data.X_train, "y": data.y_train}, {"X": data.X_test, "y": data.y_test}

    def add(self, row, show=None):
        """Print ``row`` (or ``show``) and append it to the log."""
        print(json.dumps(row if show is None else show), flush=True)
        append_jsonl(self.log, row)

    def rows(self):
        if not self.log.exists():
            sys.exit(print(f"{self.name}: no results yet ({self.log} missing); run a part first."))
        return read_jsonl(self.log)

    def write_report(self, title, intro, sections, runs=""):
        """Title, provenance, ``intro`` lines, ``sections`` (markdown) and the hand-written notes, to the report."""
        notes = RESULTS_DIR / f"{self.name}_notes.md"
        source = f"Generated from `{self.log.name}`{runs} by: {provenance()}"
        out = [f"# {title}", "", source, "", *intro, "", *sections]
        out += [notes.read_text().rstrip()] if notes.exists() else []
        text = "\n".join(out).rstrip("\n") + "\n"
        if self.md != partial_path(self.md):  # the committed report: reproducible from the repository
            text = check_publishable(text, allow_dirty=self.allow_dirty)
        self.md.write_text(text)
        print(f"wrote {self.md}")


def images(X):
    """uint8 images (n x 28 x 28) as float32 in [0, 1], shape (n, 1, 28, 28)."""
    return (X.astype(np.float32) / 255.0)[:, None]


def per_class(y, k, rng, n_classes=10):
    """Indices of ``k`` rows of each class, drawn without replacement."""
    return np.concatenate([rng.choice(np.flatnonzero(y == c), k, replace=False) for c in range(n_classes)])


def class_counts(total, gamma, k=10):
    """Exponential profile ``max(1, round(total * gamma^(-i/(k-1))))``, ``i = 0..k-1`` (class 0 largest)."""
    return [max(1, int(round(total * gamma ** (-i / (k - 1))))) for i in range(k)]


def long_tail(y, n1, m1, gamma, rng):
    """Labeled and unlabeled rows of a long-tailed draw: class ``k`` gets ``class_counts(n1)[k]`` and ``(m1)[k]``."""
    lab, unl = [], []
    for k, (n_k, m_k) in enumerate(zip(class_counts(n1, gamma), class_counts(m1, gamma))):
        idx = rng.permutation(np.flatnonzero(y == k))[: n_k + m_k]
        lab.append(idx[:n_k])
        unl.append(idx[n_k:])
    return np.concatenate(lab), np.concatenate(unl)


def cpu_timer():
    """A skorch callback recording each epoch's process CPU seconds as ``cpu_dur``."""
    from skorch.callbacks import Callback

    class CPUTimer(Callback):
        def on_epoch_begin(self, net, **kwargs):
            self._timer = timed()
            self._timing = self._timer.__enter__()

        def on_epoch_end(self, net, **kwargs):
            self._timer.__exit__(None, None, None)
            net.history.record("cpu_dur", self._timing.cpu)

    return CPUTimer()


def fixmatch_loop(module, X, y, lab, unl, steps, rng, batch=32, mu=3, ema=None, parts=None):
    """``steps`` bare FixMatch steps (no skorch): weak/strong views, threshold 0.95, Adam, optional EMA.

    ``X`` (a float tensor) and ``y`` (an int tensor) hold every row; ``lab`` / ``unl`` are the row indices
    each batch is drawn from (with replacement). With ``parts`` (a dict), the CPU seconds of each component
    (augment, forward, backward, optimizer) are added to it.
    """
    import torch
    import torch.nn.functional as F

    from skssl.deep import RandAugment, RandomShift

    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    weak, strong = RandomShift(), RandAugment()

    @contextlib.contextmanager
    def part(name):
        if parts is None:
            yield
            return
        with timed() as t:
            yield
        parts[name] += t.cpu

    for _ in range(steps):
        il, iu = torch.as_tensor(rng.choice(lab, batch)), torch.as_tensor(rng.choice(unl, batch * mu))
        module.train()
        with part("augment"):
            views = torch.cat([weak(X[il]), weak(X[iu]), strong(X[iu])])
        with part("forward"):
            logits = module(views)
            conf, pseudo = torch.softmax(logits[batch : batch * (1 + mu)].detach(), 1).max(1)
            loss_u = F.cross_entropy(logits[batch * (1 + mu) :], pseudo, reduction="none") * (conf >= 0.95)
            loss = F.cross_entropy(logits[:batch], y[il]) + loss_u.mean()
        with part("backward"):
            opt.zero_grad()
            loss.backward()
        with part("optimizer"):
            opt.step()
            if ema is not None:
                ema.update(module, 0.999)
            loss.item()
