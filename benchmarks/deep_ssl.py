"""Deep semi-supervised estimators on MNIST (CPU, subsampled)::

    OMP_NUM_THREADS=1 python benchmarks/deep_ssl.py [--quick] [part ...] [report]

Parts: ``labels`` (accuracy vs labels per class 1, 4, 10: labeled-only, FixMatch, FreeMatch with both SAF
signs; ``labels:<per_class>:<variant>[,...][:<epochs>]`` runs one cell), ``longtail`` (gamma = 100, FixMatch
vs Adsh with mu=2, on a small pool; ``longtail:<epochs>``; the paper's protocol is ``deep_long_tail.py``),
``overhead`` (CPU time of 40 FixMatch steps, skorch net vs a bare PyTorch loop doing the same step, 5
alternating repeats), ``report`` (``results/deep_ssl.md`` from the log). No part: the three parts. ``--quick``
(1 epoch, 5 overhead steps) or fewer epochs than the default write the partial log and report (``_deep.py``).

Everything is subsampled so one run takes a couple of minutes on one shared CPU core: an unlabeled pool of
``N_POOL`` training images (seed ``DEEP_SSL_SEED``, default 0, draws the pool and is the ``random_state``),
``N_TEST`` test images, ``EPOCHS x ITERS`` steps with ``batch_size=32`` and ``mu=3`` (the defaults
``mu=7, batch_size=64`` cost ~5x more per step), default SmallCNN. The labeled-only baseline is the same CNN
with the same weak augmentation and the same number of steps, on the labeled rows.
"""

import os
import sys

import numpy as np
import torch
from _deep import Study, cpu_timer, fixmatch_loop, images, long_tail, parse_args, per_class
from _harness import markdown_table, timed
from sklearn.metrics import balanced_accuracy_score, recall_score

from skssl.deep import (
    AdshClassifier,
    FixMatchClassifier,
    FreeMatchClassifier,
    SelfAdaptiveThreshold,
    SupervisedNetClassifier,
)

STUDY = Study("deep_ssl")
N_POOL, N_TEST = 5000, 2000
EPOCHS, ITERS, BATCH, MU = 10, 40, 32, 3
SEED = int(os.environ.get("DEEP_SSL_SEED", 0))  # data split and random_state


def load():
    tr, te, rng = STUDY.train, STUDY.test, np.random.default_rng(SEED)
    i_tr = rng.permutation(tr["y"].shape[0])[:N_POOL]
    i_te = rng.permutation(te["y"].shape[0])[:N_TEST]
    return images(tr["X"][i_tr]), tr["y"][i_tr].astype(int), images(te["X"][i_te]), te["y"][i_te].astype(int)


def common(epochs):
    timer = [("cpu_timer", cpu_timer())]
    return dict(max_epochs=epochs, iterations_per_epoch=ITERS, batch_size=BATCH, random_state=SEED, callbacks=timer)


def run(name, est, X, y, X_te, y_te, extra):
    with timed() as t:
        est.fit(X, y)
    pred = est.predict(X_te)
    row = dict(name=name, acc=float(np.mean(pred == y_te)), bal_acc=float(balanced_accuracy_score(y_te, pred)))
    row.update(wall_s=round(t.wall, 1), cpu_s=round(t.cpu, 1), cpu_per_epoch=float(np.mean(est.history[:, "cpu_dur"])))
    row.update(extra)
    if "mask_rate" in est.history[-1]:
        row["final_mask_rate"] = float(est.history[-1, "mask_rate"])
    STUDY.add(row)
    return row, pred


def part_labels(per_classes=(1, 4, 10), variants=("sup", "fixmatch", "freematch+1", "freematch-1"), epochs=EPOCHS):
    X, y, X_te, y_te = load()
    for k in per_classes:
        lab = per_class(y, k, np.random.default_rng(SEED + k))
        y_semi = np.full(y.shape[0], -1)
        y_semi[lab] = y[lab]
        extra = dict(part="labels", per_class=k, steps=epochs * ITERS)
        for v in variants:
            if v == "sup":
                est = SupervisedNetClassifier(augment="weak", **common(epochs))
                run("labeled-only", est, X[lab], y[lab], X_te, y_te, extra)
            elif v == "fixmatch":
                run("FixMatch", FixMatchClassifier(mu=MU, **common(epochs)), X, y_semi, X_te, y_te, extra)
            elif v.startswith("freematch"):
                sign = 1 if v.endswith("+1") else -1
                masking = SelfAdaptiveThreshold(saf_sign=sign)
                est = FreeMatchClassifier(mu=MU, masking=masking, **common(epochs))
                run(f"FreeMatch saf_sign={sign:+d}", est, X, y_semi, X_te, y_te, extra)


def part_longtail(n1=50, m1=600, gamma=100, epochs=EPOCHS):
    """Paper 000 section 5.1: n_k = n_1 gamma^(-(k-1)/(K-1)), classes 0..9 by decreasing size."""
    _, _, X_te, y_te = load()
    # the long-tailed pool is drawn from the full training set (the 5000 pool is too small for m1)
    yf = STUDY.train["y"].astype(int)
    lab, unl = long_tail(yf, n1, m1, gamma, np.random.default_rng(SEED + 100))
    Xl = images(STUDY.train["X"][np.concatenate([lab, unl])])
    y_semi = np.concatenate([yf[lab], np.full(unl.shape[0], -1)])
    extra = dict(part="longtail", gamma=gamma, n1=n1, m1=m1, n_labeled=int(lab.shape[0]))
    extra.update(n_unlabeled=int(unl.shape[0]), steps=epochs * ITERS, seed=SEED)
    for name, cls in (("FixMatch", FixMatchClassifier), ("Adsh", AdshClassifier)):
        est = cls(mu=2, **common(epochs))
        row, pred = run(name + " (mu=2)", est, Xl, y_semi, X_te, y_te, extra)
        rec = recall_score(y_te, pred, labels=list(range(10)), average=None)
        row = dict(name=name, part="longtail-recall", steps=epochs * ITERS, seed=SEED)
        row.update(recall=[round(float(r), 3) for r in rec], minority_recall=float(np.mean(rec[[7, 8, 9]])))
        STUDY.add(dict(row, thresholds=est.history[-1, "thresholds"]))


def part_overhead(steps=40, repeats=5):
    """CPU time of `steps` FixMatch steps: skorch net vs a bare loop doing the same work, alternating."""
    from skssl.deep import SmallCNN
    from skssl.deep._ema import EMAState

    X, y, _, _ = load()
    lab = per_class(y, 4, np.random.default_rng(SEED))
    y_semi = np.full(y.shape[0], -1)
    y_semi[lab] = y[lab]
    skorch_t, bare_t = [], []

    def skorch_run(r):
        est = FixMatchClassifier(mu=MU, **common(1)).set_params(iterations_per_epoch=steps, random_state=r)
        est.fit(X, y_semi)
        skorch_t.append(est.history[-1, "cpu_dur"])

    for r in range(repeats):
        if r % 2 == 0:  # alternate which loop runs first
            skorch_run(r)
        # bare loop: same module, augmentations, loss, optimiser and EMA; no skorch
        torch.manual_seed(r)
        module = SmallCNN(1, 10)
        ema = EMAState(module)
        Xt, yt, unl = torch.as_tensor(X), torch.as_tensor(y), np.flatnonzero(y_semi == -1)
        with timed() as t:
            fixmatch_loop(module, Xt, yt, lab, unl, steps, np.random.default_rng(r), ema=ema)
        bare_t.append(t.cpu)
        if r % 2 == 1:
            skorch_run(r)
    row = dict(part="overhead", steps=steps, skorch_cpu_s=[round(t, 3) for t in skorch_t])
    row.update(bare_cpu_s=[round(t, 3) for t in bare_t], overhead=float(np.median(skorch_t) / np.median(bare_t) - 1))
    STUDY.add(dict(row, overhead_min=float(np.min(skorch_t) / np.min(bare_t) - 1)))


def part_report():
    """Write the report from the log: the last row of each configuration."""
    rows = STUDY.rows()
    intro = [
        "OMP_NUM_THREADS=1, torch.set_num_threads(1), 2 shared CPU cores (wall times inflated by other jobs; "
        "CPU seconds are the process's own).",
        f"Pool {N_POOL} training images (labeled rows drawn from it, the rest unlabeled), {N_TEST} test "
        f"images, default SmallCNN, batch_size={BATCH}, mu={MU} (FixMatch/FreeMatch), {ITERS} steps per "
        "epoch; one run per cell, seed 0 (data split and random_state) unless a seed column says otherwise.",
    ]
    last = {(r["per_class"], r.get("steps", EPOCHS * ITERS), r["name"]): r for r in rows if r.get("part") == "labels"}
    table = [
        [k, steps, name, f"{r['acc']:.3f}", f"{r['cpu_per_epoch']:.2f}"]
        + ["" if r.get("final_mask_rate") is None else f"{r['final_mask_rate']:.2f}"]
        for (k, steps, name), r in sorted(last.items())
    ]
    header = ["labels/class", "steps", "method", "test acc", "CPU s/epoch", "final mask rate"]
    sections = ["## Test accuracy vs labels per class", "", markdown_table(header, table)]
    key = lambda r, name: (r.get("steps", EPOCHS * ITERS), r.get("seed", 0), name)  # noqa: E731
    lt = {key(r, r["name"].split(" ")[0]): r for r in rows if r.get("part") == "longtail"}
    rec = {key(r, r["name"]): r for r in rows if r.get("part") == "longtail-recall"}
    if lt:
        a = next(iter(lt.values()))
        sections.append(
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
        sections.append(markdown_table(header + ["final thresholds"], table))
    ov = [r for r in rows if r.get("part") == "overhead"]
    if ov:
        r = ov[-1]
        sections.append(f"## skorch loop overhead ({r['steps']} FixMatch steps per run, process CPU seconds)\n")
        header = ["skorch net", "bare PyTorch loop", "overhead of medians", "overhead of minima"]
        cells = [r["skorch_cpu_s"], r["bare_cpu_s"], f"{100 * r['overhead']:.1f}%"]
        sections.append(markdown_table(header, [cells + [f"{100 * r.get('overhead_min', float('nan')):.1f}%"]]))
    STUDY.write_report("Deep SSL on MNIST (CPU)", intro, sections)


if __name__ == "__main__":
    torch.set_num_threads(1)
    cli = parse_args(__doc__, ["labels", "longtail", "overhead"])
    STUDY.allow_dirty = cli.allow_dirty
    if unknown := [p for p in cli.parts if p.split(":")[0] not in ("labels", "longtail", "overhead", "report")]:
        sys.exit(f"deep_ssl: unknown part {unknown[0]!r}; use labels[:...], longtail[:EPOCHS], overhead or report.")
    # labels:<per_class>:<variant>[,<variant>...][:<epochs>] and longtail:<epochs> name their epochs last
    epochs = {p: 1 if cli.quick else int(p.split(":")[-1]) if p.count(":") in (1, 3) else EPOCHS for p in cli.parts}
    if cli.quick or min(epochs.values()) < EPOCHS:
        STUDY.partial("--quick or fewer epochs than the default")
    if cli.parts != ["report"]:
        STUDY.load_mnist()
    for p in cli.parts:
        name, *spec = p.split(":")
        if name == "labels":
            part_labels(*((int(spec[0]),), tuple(spec[1].split(","))) if spec else (), epochs=epochs[p])
        elif name == "longtail":
            part_longtail(epochs=epochs[p])
        elif p == "overhead":
            part_overhead(*((5, 2) if cli.quick else ()))
        else:
            part_report()
