"""Deep semi-supervised estimators on MNIST (CPU, subsampled).

Run from the repository root::

    OMP_NUM_THREADS=1 python benchmarks/deep_ssl.py [part ...]

Parts: ``labels`` (accuracy vs labels per class: labeled-only, FixMatch,
FreeMatch with both SAF signs), ``longtail`` (gamma = 100, FixMatch vs Adsh,
on a small pool; the paper's protocol is ``benchmarks/deep_long_tail.py``),
``overhead`` (skorch loop vs a bare PyTorch loop doing the same step).
Each part appends its rows as JSON lines to ``benchmarks/results/deep_ssl.jsonl``;
the tables in ``benchmarks/results/deep_ssl.md`` are written from them.

MNIST comes from :func:`skssl.datasets.fetch_mnist`: ``$SKSSL_DATA/mnist/``, a
``shared/data/mnist/`` folder beside the repository, else OpenML's download
(``benchmarks/_mnist.py``; rows from OpenML's copy go to
``deep_ssl.partial.jsonl``, since its row order makes the seeded subsamples
differ); uint8 images scaled to [0, 1], shape (n, 1, 28, 28), default
SmallCNN. When MNIST is neither local nor downloadable the script prints one
line and exits. Everything is subsampled so
one run takes a couple of minutes on one shared CPU core: an unlabeled pool
of ``N_POOL`` training images, ``N_TEST`` test images, ``EPOCHS x ITERS``
steps with ``batch_size=32`` and ``mu=3`` (the defaults ``mu=7, batch_size=64``
cost ~5x more per step). The labeled-only baseline is the same CNN with the
same weak augmentation and the same number of steps, on the labeled rows.
"""

import json
import os
import sys

import numpy as np
import torch
from _harness import RESULTS_DIR, append_jsonl, markdown_table, provenance, read_jsonl, timed
from _mnist import load_mnist
from sklearn.metrics import balanced_accuracy_score, recall_score
from skorch.callbacks import Callback

from skssl.deep import (
    AdshClassifier,
    FixMatchClassifier,
    FreeMatchClassifier,
    SelfAdaptiveThreshold,
    SupervisedNetClassifier,
)

TRAIN = TEST = None  # MNIST splits (dicts with X and y), set by need_data()
OUT = RESULTS_DIR / "deep_ssl.jsonl"
N_POOL, N_TEST = 5000, 2000
EPOCHS, ITERS, BATCH, MU = 10, 40, 32, 3
SEED = int(os.environ.get("DEEP_SSL_SEED", 0))  # data split and random_state


class CPUTimer(Callback):
    """Record the process CPU time of each epoch as ``cpu_dur``."""

    def on_epoch_begin(self, net, **kwargs):
        self._timer = timed()
        self._timing = self._timer.__enter__()

    def on_epoch_end(self, net, **kwargs):
        self._timer.__exit__(None, None, None)
        net.history.record("cpu_dur", self._timing.cpu)


def need_data():
    """Load MNIST (skssl.datasets.fetch_mnist); print one line and exit when it is unavailable."""
    global TRAIN, TEST, OUT
    TRAIN, TEST, OUT = load_mnist("deep_ssl", OUT)


def load():
    tr, te = TRAIN, TEST
    rng = np.random.default_rng(SEED)
    i_tr = rng.permutation(tr["y"].shape[0])[:N_POOL]
    i_te = rng.permutation(te["y"].shape[0])[:N_TEST]
    f = lambda a: (a.astype(np.float32) / 255.0)[:, None]  # noqa: E731
    return f(tr["X"][i_tr]), tr["y"][i_tr].astype(int), f(te["X"][i_te]), te["y"][i_te].astype(int)


def pick_labeled(y, per_class, rng):
    return np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in range(10)])


def common(**kw):
    return dict(
        max_epochs=kw.pop("max_epochs", EPOCHS),
        iterations_per_epoch=ITERS,
        batch_size=BATCH,
        random_state=SEED,
        callbacks=[("cpu_timer", CPUTimer())],
        **kw,
    )


def run(name, est, X, y, X_te, y_te, extra):
    with timed() as t:
        est.fit(X, y)
    pred = est.predict(X_te)
    bal_acc = float(balanced_accuracy_score(y_te, pred))
    row = dict(
        name=name,
        acc=float(np.mean(pred == y_te)),
        bal_acc=bal_acc,
        wall_s=round(t.wall, 1),
        cpu_s=round(t.cpu, 1),
        cpu_per_epoch=float(np.mean(est.history[:, "cpu_dur"])),
        **extra,
    )
    if "mask_rate" in est.history[-1]:
        row["final_mask_rate"] = float(est.history[-1, "mask_rate"])
    print(json.dumps(row), flush=True)
    append_jsonl(OUT, row)
    return row, pred


def part_labels(per_classes=(1, 4, 10), variants=("sup", "fixmatch", "freematch+1", "freematch-1"), epochs=EPOCHS):
    X, y, X_te, y_te = load()
    for k in per_classes:
        lab = pick_labeled(y, k, np.random.default_rng(SEED + k))
        y_semi = np.full(y.shape[0], -1)
        y_semi[lab] = y[lab]
        extra = dict(part="labels", per_class=k, steps=epochs * ITERS)
        for v in variants:
            if v == "sup":
                est = SupervisedNetClassifier(augment="weak", **common(max_epochs=epochs))
                run("labeled-only", est, X[lab], y[lab], X_te, y_te, extra)
            elif v == "fixmatch":
                est = FixMatchClassifier(mu=MU, **common(max_epochs=epochs))
                run("FixMatch", est, X, y_semi, X_te, y_te, extra)
            elif v.startswith("freematch"):
                sign = 1 if v.endswith("+1") else -1
                est = FreeMatchClassifier(
                    mu=MU, masking=SelfAdaptiveThreshold(saf_sign=sign), **common(max_epochs=epochs)
                )
                run(f"FreeMatch saf_sign={sign:+d}", est, X, y_semi, X_te, y_te, extra)


def part_longtail(n1=50, m1=600, gamma=100, epochs=EPOCHS):
    """Paper 000 section 5.1: n_k = n_1 gamma^(-(k-1)/(K-1)), classes 0..9 by decreasing size."""
    X, y, X_te, y_te = load()
    tr = TRAIN
    rng = np.random.default_rng(SEED + 100)
    # draw the long-tailed pool from the full training set (the 5000 pool is too small for m1)
    Xf, yf = tr["X"], tr["y"].astype(int)
    lab, unl = [], []
    for k in range(10):
        n_k = max(1, int(round(n1 * gamma ** (-k / 9))))
        m_k = max(1, int(round(m1 * gamma ** (-k / 9))))
        idx = rng.permutation(np.flatnonzero(yf == k))[: n_k + m_k]
        lab.append(idx[:n_k])
        unl.append(idx[n_k:])
    lab, unl = np.concatenate(lab), np.concatenate(unl)
    rows = np.concatenate([lab, unl])
    Xl = (Xf[rows].astype(np.float32) / 255.0)[:, None]
    y_semi = np.concatenate([yf[lab], np.full(unl.shape[0], -1)])
    extra = dict(
        part="longtail",
        gamma=gamma,
        n1=n1,
        m1=m1,
        n_labeled=int(lab.shape[0]),
        n_unlabeled=int(unl.shape[0]),
        steps=epochs * ITERS,
        seed=SEED,
    )
    minority = [7, 8, 9]
    pairs = [
        ("FixMatch", FixMatchClassifier(mu=2, **common(max_epochs=epochs))),
        ("Adsh", AdshClassifier(mu=2, **common(max_epochs=epochs))),
    ]
    for name, est in pairs:
        row, pred = run(name + " (mu=2)", est, Xl, y_semi, X_te, y_te, extra)
        rec = recall_score(y_te, pred, labels=list(range(10)), average=None)
        row2 = dict(
            name=name,
            part="longtail-recall",
            steps=epochs * ITERS,
            seed=SEED,
            recall=[round(float(r), 3) for r in rec],
            minority_recall=float(np.mean(rec[minority])),
            thresholds=est.history[-1, "thresholds"],
        )
        print(json.dumps(row2), flush=True)
        append_jsonl(OUT, row2)


def part_overhead(steps=40, repeats=5):
    """CPU time of `steps` FixMatch steps: skorch net vs a bare loop doing the same work."""
    from skssl.deep import RandAugment, RandomShift, SmallCNN
    from skssl.deep._ema import EMAState

    X, y, _, _ = load()
    lab = pick_labeled(y, 4, np.random.default_rng(SEED))
    y_semi = np.full(y.shape[0], -1)
    y_semi[lab] = y[lab]
    skorch_t, bare_t = [], []

    def skorch_run(r):
        est = FixMatchClassifier(
            mu=MU,
            max_epochs=1,
            iterations_per_epoch=steps,
            batch_size=BATCH,
            random_state=r,
            callbacks=[("cpu_timer", CPUTimer())],
        )
        est.fit(X, y_semi)
        skorch_t.append(est.history[-1, "cpu_dur"])

    for r in range(repeats):
        if r % 2 == 0:  # alternate which loop runs first
            skorch_run(r)
        # bare loop: same module, augmentations, loss, optimiser and EMA; no skorch
        torch.manual_seed(r)
        module = SmallCNN(1, 10)
        ema = EMAState(module)
        opt = torch.optim.Adam(module.parameters(), lr=1e-3)
        weak, strong = RandomShift(), RandAugment()
        Xl, yl = torch.as_tensor(X[lab]), torch.as_tensor(y[lab])
        Xu = torch.as_tensor(X[y_semi == -1])
        g = np.random.default_rng(r)
        with timed() as t:
            for _ in range(steps):
                il = torch.as_tensor(g.integers(0, Xl.shape[0], BATCH))
                iu = torch.as_tensor(g.integers(0, Xu.shape[0], BATCH * MU))
                xl, xu = Xl[il], Xu[iu]
                module.train()
                logits = module(torch.cat([weak(xl), weak(xu), strong(xu)]))
                ll, lw, ls = logits[:BATCH], logits[BATCH : BATCH * (1 + MU)], logits[BATCH * (1 + MU) :]
                pw = torch.softmax(lw.detach(), 1)
                conf, pseudo = pw.max(1)
                loss = (
                    torch.nn.functional.cross_entropy(ll, yl[il])
                    + (torch.nn.functional.cross_entropy(ls, pseudo, reduction="none") * (conf >= 0.95).float()).mean()
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                ema.update(module, 0.999)
                loss.item()
        bare_t.append(t.cpu)
        if r % 2 == 1:
            skorch_run(r)
    row = dict(
        part="overhead",
        steps=steps,
        skorch_cpu_s=[round(t, 3) for t in skorch_t],
        bare_cpu_s=[round(t, 3) for t in bare_t],
        overhead=float(np.median(skorch_t) / np.median(bare_t) - 1),
        overhead_min=float(np.min(skorch_t) / np.min(bare_t) - 1),
    )
    print(json.dumps(row), flush=True)
    append_jsonl(OUT, row)


def part_report():
    """Write benchmarks/results/deep_ssl.md from the JSON lines (the last row per configuration)."""
    rows = read_jsonl(OUT)
    out = [
        "# Deep SSL on MNIST (CPU)",
        "",
        f"Generated from `{OUT.name}` by: {provenance()}",
        "",
        "OMP_NUM_THREADS=1, torch.set_num_threads(1), 2 shared CPU cores (wall times inflated by other jobs; "
        "CPU seconds are the process's own).",
        f"Pool {N_POOL} training images (labeled rows drawn from it, the rest unlabeled), {N_TEST} test "
        f"images, default SmallCNN, batch_size={BATCH}, mu={MU} (FixMatch/FreeMatch), {ITERS} steps per "
        "epoch; one run per cell, seed 0 (data split and random_state) unless a seed column says otherwise.",
        "",
        "## Test accuracy vs labels per class",
        "",
    ]
    last = {}
    for r in rows:
        if r.get("part") == "labels":
            last[(r["per_class"], r.get("steps", EPOCHS * ITERS), r["name"])] = r
    table = []
    for (k, steps, name), r in sorted(last.items()):
        mr = r.get("final_mask_rate")
        table.append(
            [k, steps, name, f"{r['acc']:.3f}", f"{r['cpu_per_epoch']:.2f}", "" if mr is None else f"{mr:.2f}"]
        )
    header = ["labels/class", "steps", "method", "test acc", "CPU s/epoch", "final mask rate"]
    out.append(markdown_table(header, table))
    key = lambda r, name: (r.get("steps", EPOCHS * ITERS), r.get("seed", 0), name)  # noqa: E731
    lt = {key(r, r["name"].split(" ")[0]): r for r in rows if r.get("part") == "longtail"}
    rec = {key(r, r["name"]): r for r in rows if r.get("part") == "longtail-recall"}
    if lt:
        a = next(iter(lt.values()))
        out.append(
            f"## Long-tailed split (gamma={a['gamma']}, N1={a['n1']}, M1={a['m1']}; {a['n_labeled']} labeled, "
            f"{a['n_unlabeled']} unlabeled; balanced test set; mu=2)\n"
        )
        table = []
        for k in sorted(lt):
            r, rr = lt[k], rec.get(k, {})
            thr = ", ".join(f"{t:.2f}" for t in rr.get("thresholds", []))
            minority = rr.get("minority_recall", float("nan"))
            table.append([k[0], k[1], k[2], f"{r['bal_acc']:.3f}", f"{minority:.3f}", rr.get("recall"), thr])
        header = ["steps", "seed", "method", "balanced acc", "minority recall (classes 7-9)", "per-class recall 0..9"]
        out.append(markdown_table(header + ["final thresholds"], table))
    ov = [r for r in rows if r.get("part") == "overhead"]
    if ov:
        r = ov[-1]
        out.append(f"## skorch loop overhead ({r['steps']} FixMatch steps per run, process CPU seconds)\n")
        header = ["skorch net", "bare PyTorch loop", "overhead of medians", "overhead of minima"]
        cells = [r["skorch_cpu_s"], r["bare_cpu_s"], f"{100 * r['overhead']:.1f}%"]
        out.append(markdown_table(header, [cells + [f"{100 * r.get('overhead_min', float('nan')):.1f}%"]]))
    notes = OUT.parent / "deep_ssl_notes.md"  # hand-written, kept across reports
    if notes.exists():
        out.append(notes.read_text().rstrip())
    (OUT.parent / "deep_ssl.md").write_text("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    torch.set_num_threads(1)
    parts = sys.argv[1:] or ["labels", "longtail", "overhead"]
    if parts != ["report"]:
        need_data()
    for p in parts:
        if p == "labels":
            part_labels()
        elif p.startswith("labels:"):
            # labels:<per_class>:<variant>[,<variant>...][:<epochs>]
            _, k, vs, *ep = p.split(":")
            part_labels((int(k),), tuple(vs.split(",")), epochs=int(ep[0]) if ep else EPOCHS)
        elif p == "longtail":
            part_longtail()
        elif p.startswith("longtail:"):
            part_longtail(epochs=int(p.split(":")[1]))
        elif p == "overhead":
            part_overhead()
        elif p == "report":
            if not OUT.exists():
                print(f"deep_ssl: no results yet ({OUT} missing); run a part first, e.g. `deep_ssl.py labels`.")
                sys.exit(0)
            part_report()
