"""Where the time of a deep skssl fit goes, on CPU (issue: threads and time)::

    python benchmarks/deep_time.py steps      # CPU/wall per FixMatch step: torch threads 1 vs default, by component
    python benchmarks/deep_time.py fit [THREADS] [MODULE] [SEED]      # a default FreeMatch fit, 4 labels per class
    python benchmarks/deep_time.py threads    # same fit with 1 and 2 torch threads: same model?
    python benchmarks/deep_time.py gridsearch # GridSearchCV(n_jobs=1) vs (n_jobs=2) wall time
    python benchmarks/deep_time.py workers    # CPU and wall s of each fit under joblib n_jobs=1 vs 2
    python benchmarks/deep_time.py report     # writes results/deep_time.md from results/deep_time.jsonl

``THREADS`` is a number of torch intra-op threads set with ``torch.set_num_threads`` before the fit
(``default`` = leave torch's own default, the number of cores); ``MODULE`` is ``default`` (the estimator's
default network), ``oldcnn`` (the network the nets shipped before, for comparison) or ``newcnn`` (its
pool-first channels-last variant). ``--quick`` (before the part) shortens every part (a few steps, one epoch,
one repeat) and writes the partial log and report (``_deep.py``).

The fit follows the setting of the issue: 4,000 MNIST training images (the first 4,000 of a seeded
permutation), 4 labeled per class (40), the other 3,960 unlabeled; accuracy on the 10,000 MNIST test images.
CPU seconds are the process's own (``_harness.timed``; with more than one thread they add up the threads'
time); the machine is shared with other jobs, so wall times are inflated and every comparison alternates its
arms within one run.
"""

import os
import sys

import numpy as np
from _deep import Study, fixmatch_loop, images, parse_args, per_class
from _harness import markdown_table, timed

STUDY = Study("deep_time")
N_POOL, PER_CLASS = 4000, 4


def load(seed=0):
    tr, te, rng = STUDY.train, STUDY.test, np.random.default_rng(seed)
    idx = rng.permutation(tr["y"].shape[0])[:N_POOL]
    X, y = images(tr["X"][idx]), tr["y"][idx].astype(int)
    lab = per_class(y, PER_CLASS, rng)
    y_semi = np.full(y.shape[0], -1)
    y_semi[lab] = y[lab]
    return X, y_semi, images(te["X"]), te["y"].astype(int)


def small_train():
    """All 40 labeled rows and the first 1,960 unlabeled ones: 2,000 rows, 4 labels per class."""
    X, y_semi, _, _ = load()
    keep = np.concatenate([np.flatnonzero(y_semi >= 0), np.flatnonzero(y_semi < 0)[:1960]])
    return X[keep], y_semi[keep]


def old_cnn(pool_first=False, channels_last=False):
    """The default CNN the nets shipped before this benchmark (conv-BN-ReLU-pool, NCHW), for comparison.

    ``pool_first=True, channels_last=True`` is the candidate replacement (conv-pool-BN-ReLU in
    channels-last memory), to measure before it becomes the default.
    """
    import torch
    from torch import nn

    class OldSmallCNN(nn.Module):
        def __init__(self, in_channels, n_classes, channels=(16, 32)):
            super().__init__()
            blocks, width = [], in_channels
            for out in channels:
                conv, pool = nn.Conv2d(width, out, 3, padding=1), nn.MaxPool2d(2, ceil_mode=True)
                norm = [nn.BatchNorm2d(out), nn.ReLU()]
                blocks += [conv, pool, *norm] if pool_first else [conv, *norm, pool]
                width = out
            self.features = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(4)
            self.head = nn.Linear(width * 16, n_classes)
            if channels_last:
                self.to(memory_format=torch.channels_last)

        def forward(self, X):
            return self.head(self.pool(self.features(X)).flatten(1))

    return OldSmallCNN


def emit(row):
    import torch

    STUDY.add(dict(row, torch=torch.__version__, cores=os.cpu_count(), load1=round(os.getloadavg()[0], 1)))


def part_steps(n_steps=40, repeats=3):
    """One FixMatch step by component, torch threads 1 and default alternating, for both networks."""
    import torch

    from skssl.deep import SmallCNN

    X, y_semi, _, _ = load()
    Xt, yt = torch.as_tensor(X), torch.as_tensor(np.maximum(y_semi, 0))
    lab, unl = np.flatnonzero(y_semi >= 0), np.flatnonzero(y_semi < 0)
    default_threads = torch.get_num_threads()
    for module_name in ("default", "oldcnn"):
        for rep in range(repeats):
            for threads in (1, default_threads) if rep % 2 == 0 else (default_threads, 1):
                torch.set_num_threads(threads)
                torch.manual_seed(rep)
                module = SmallCNN(1, 10) if module_name == "default" else old_cnn()(1, 10)
                parts = dict(augment=0.0, forward=0.0, backward=0.0, optimizer=0.0)
                with timed() as total:
                    fixmatch_loop(module, Xt, yt, lab, unl, n_steps, np.random.default_rng(rep), parts=parts)
                row = dict(part="steps", module=module_name, threads=threads, repeat=rep, steps=n_steps)
                row.update(cpu_ms_per_step=round(1e3 * total.cpu / n_steps, 1))
                row.update(wall_ms_per_step=round(1e3 * total.wall / n_steps, 1))
                emit(dict(row, **{f"{k}_ms": round(1e3 * v / n_steps, 1) for k, v in parts.items()}))
    torch.set_num_threads(default_threads)


def fit_once(threads="default", module="default", seed=0, label="fit", **params):
    """A FreeMatch fit with its defaults (but ``params``); returns its test probabilities."""
    import torch

    from skssl.deep import FreeMatchClassifier

    default_threads = torch.get_num_threads()
    if threads != "default":
        torch.set_num_threads(int(threads))
    kw = dict(random_state=seed, **params)
    if module in ("oldcnn", "newcnn"):
        cnn = old_cnn() if module == "oldcnn" else old_cnn(pool_first=True, channels_last=True)
        kw.update(module=cnn, module__in_channels=1, module__n_classes=10)
    X, y_semi, X_te, y_te = load(seed)
    est = FreeMatchClassifier(**kw)
    with timed() as t:
        est.fit(X, y_semi)
    proba = est.predict_proba(X_te)
    torch.set_num_threads(default_threads)
    process_threads = torch.get_num_threads() if threads == "default" else int(threads)
    row = dict(part=label, threads=threads, process_torch_threads=process_threads)
    row.update(net_n_jobs=est.n_jobs, module=module, seed=seed)
    row.update(params=dict(params), steps=int(est.max_epochs * est.iterations_per_epoch), cpu_s=round(t.cpu, 1))
    emit(dict(row, wall_s=round(t.wall, 1), test_acc=float(np.mean(proba.argmax(1) == y_te))))
    return proba


def part_threads(seed=0, max_epochs=4):
    """Same data and random_state: does the model depend on the machine's or the net's thread count?

    A: process torch threads 1, net ``n_jobs=1``; B: process threads 2, net ``n_jobs=1`` (a machine
    with more cores); C: net ``n_jobs=2``. A short schedule (``max_epochs`` x 50 steps) keeps the
    2-thread fit affordable on a shared machine.
    """
    arms = {"A": (1, 1), "B": (2, 1), "C": (1, 2)}
    probas = {}
    for name, (threads, n_jobs) in arms.items():
        probas[name] = fit_once(str(threads), seed=seed, label=f"threads-{name}", max_epochs=max_epochs, n_jobs=n_jobs)
    names = {arm: f"{arm} (process threads {threads}, n_jobs={n_jobs})" for arm, (threads, n_jobs) in arms.items()}
    for x, z in (("A", "B"), ("A", "C")):
        a, b = probas[x], probas[z]
        row = dict(part="threads-compare", seed=seed, pair=f"{names[x]} vs {names[z]}", steps=max_epochs * 50)
        row.update(max_abs_proba_diff=float(np.abs(a - b).max()))
        emit(dict(row, prediction_agreement=float(np.mean(a.argmax(1) == b.argmax(1)))))


def part_gridsearch(repeats=3, max_epochs=2):
    """GridSearchCV(n_jobs=1) vs (n_jobs=2): 2 candidates x 2 folds = 4 fits of 50 steps, plus the refit."""
    import torch
    from sklearn.model_selection import GridSearchCV

    from skssl.deep import FreeMatchClassifier
    from skssl.model_selection import SemiSupervisedKFold

    X, y_semi = small_train()
    est = FreeMatchClassifier(max_epochs=max_epochs, iterations_per_epoch=25, random_state=0)
    grid = {"unlabeled_weight": [0.5, 1.0]}
    for rep in range(repeats):
        for n_jobs in (1, 2) if rep % 2 == 0 else (2, 1):
            gs = GridSearchCV(est, grid, cv=SemiSupervisedKFold(2), n_jobs=n_jobs)
            with timed() as t:
                gs.fit(X, y_semi)
            row = dict(part="gridsearch", n_jobs=n_jobs, repeat=rep, parent_torch_threads=torch.get_num_threads())
            row.update(wall_s=round(t.wall, 1), parent_cpu_s=round(t.cpu, 1))
            row.update(mean_test_score=[round(float(s), 4) for s in gs.cv_results_["mean_test_score"]])
            # wall seconds of one fit inside the search (in the worker process for n_jobs=2)
            emit(dict(row, mean_fit_time=[round(float(s), 1) for s in gs.cv_results_["mean_fit_time"]]))


def _timed_fit(X, y_semi, seed, max_epochs=2):
    import torch

    from skssl.deep import FreeMatchClassifier

    with timed() as t:
        FreeMatchClassifier(max_epochs=max_epochs, iterations_per_epoch=25, random_state=seed).fit(X, y_semi)
    return dict(cpu_s=round(t.cpu, 2), wall_s=round(t.wall, 2), threads=torch.get_num_threads(), pid=os.getpid())


def part_workers(n_fits=4, max_epochs=2):
    """CPU and wall time of each fit run by joblib with n_jobs=1 and n_jobs=2 (as GridSearchCV runs them)."""
    from joblib import Parallel, delayed

    X, y_semi = small_train()
    for n_jobs in (1, 2, 1, 2):
        with timed() as t:
            res = Parallel(n_jobs=n_jobs)(delayed(_timed_fit)(X, y_semi, s, max_epochs) for s in range(n_fits))
        row = dict(part="workers", n_jobs=n_jobs, total_wall_s=round(t.wall, 1), fit_cpu_s=[r["cpu_s"] for r in res])
        row.update(fit_wall_s=[r["wall_s"] for r in res], torch_threads=sorted({r["threads"] for r in res}))
        emit(dict(row, processes=len({r["pid"] for r in res})))


def part_report():
    rows = STUDY.rows()
    intro = [
        "Every row below is one run of the part named in its section. The machine has 2 cores shared with "
        "other engineers' jobs (`load1` = 1-minute load average at the end of the run): wall times are "
        "inflated, CPU seconds are the process's own (summed over its threads).",
    ]
    out = []
    steps = [r for r in rows if r["part"] == "steps"]
    if steps:
        out.append("## One FixMatch step (`deep_time.py steps`): 32 labeled + 2 x 96 unlabeled 28x28 images\n")
        header = ["network", "torch threads", "repeat", "CPU ms/step", "wall ms/step", "augment", "forward"]
        keys = ["module", "threads", "repeat", "cpu_ms_per_step", "wall_ms_per_step", "augment_ms", "forward_ms"]
        keys += ["backward_ms", "optimizer_ms", "load1"]
        out.append(markdown_table(header + ["backward", "optimizer", "load1"], [[r[k] for k in keys] for r in steps]))
        out.append("Minimum over repeats (CPU ms/step / wall ms/step):\n")
        for mod, t in sorted({(r["module"], r["threads"]) for r in steps}):
            sel = [r for r in steps if r["module"] == mod and r["threads"] == t]
            best = f"{min(r['cpu_ms_per_step'] for r in sel)} / {min(r['wall_ms_per_step'] for r in sel)}"
            out.append(f"* {mod} network, {t} thread(s): {best}")
        out.append("")
    fits = [r for r in rows if r["part"] == "fit" or r["part"].startswith("threads-") and "cpu_s" in r]
    if fits:
        out.append(f"## FreeMatch fits, {PER_CLASS} labels per class ({N_POOL} training images, 10,000 test images)\n")
        header = ["part", "process torch threads", "net n_jobs", "network", "seed", "params", "steps", "CPU s"]
        table = [
            [r["part"], r["threads"], r.get("net_n_jobs", "see notes"), r["module"], r["seed"]]
            + [r["params"] or "defaults", r["steps"], r["cpu_s"], r["wall_s"], f"{r['test_acc']:.4f}", r["load1"]]
            for r in fits
        ]
        out.append(markdown_table(header + ["wall s", "test acc", "load1"], table))
    cmp_ = [r for r in rows if r["part"] == "threads-compare"]
    if cmp_:
        out.append("## Same data and random_state, different thread counts\n")
        header = ["seed, arms", "max abs proba diff (10,000 test images)", "prediction agreement"]
        table = [
            [f"{r['seed']} {r.get('pair', '')} ({r.get('steps', '?')} steps)", f"{r['max_abs_proba_diff']:.3g}"]
            + [f"{r['prediction_agreement']:.4f}"]
            for r in cmp_
        ]
        out.append(markdown_table(header, table))
    gs = [r for r in rows if r["part"] == "gridsearch"]
    # runs are told apart by what they recorded: the first run did not record the fit times yet
    for title, run in (
        ("first run, fit times not recorded", [r for r in gs if "mean_fit_time" not in r]),
        ("second run", [r for r in gs if "mean_fit_time" in r]),
    ):
        if not run:
            continue
        out.append(
            "## GridSearchCV, 2 candidates x 2 folds (50-step FreeMatch fits, 2,000 images) + refit: " + title + "\n"
        )
        header = ["n_jobs", "repeat", "wall s of the search", "mean wall s of one fit per candidate", "parent CPU s"]
        header += ["parent torch threads", "mean test scores", "load1"]
        table = [
            [r["n_jobs"], r["repeat"], r["wall_s"], r.get("mean_fit_time", "-"), r["parent_cpu_s"]]
            + [r["parent_torch_threads"], r["mean_test_score"], r["load1"]]
            for r in run
        ]
        out.append(markdown_table(header, table).rstrip("\n"))
        for nj in (1, 2):
            sel = [r["wall_s"] for r in run if r["n_jobs"] == nj]
            if sel:
                out.append(f"\nn_jobs={nj}: search wall time {sorted(sel)} s, minimum {min(sel)} s.")
        out.append("")
    wk = [r for r in rows if r["part"] == "workers"]
    if wk:
        out.append("## The same 4 short fits (50 steps, 2,000 images) run by joblib with n_jobs=1 and n_jobs=2\n")
        header = ["n_jobs", "processes", "torch threads in the process", "total wall s", "CPU s of each fit"]
        keys = ["n_jobs", "processes", "torch_threads", "total_wall_s", "fit_cpu_s", "fit_wall_s", "load1"]
        out.append(markdown_table(header + ["wall s of each fit", "load1"], [[r[k] for k in keys] for r in wk]))
    STUDY.write_report("Where the time of a deep fit goes (CPU)", intro, out)


if __name__ == "__main__":
    cli = parse_args(__doc__, ["report"])
    STUDY.allow_dirty = cli.allow_dirty
    cmd, *args = cli.parts
    parts = dict(report=part_report, steps=part_steps, threads=part_threads, gridsearch=part_gridsearch)
    parts.update(workers=part_workers, fit=lambda **kw: fit_once(*args[:2], *map(int, args[2:3]), **kw))
    short = {}
    if cli.quick:  # a few steps, one epoch, fewer repeats
        STUDY.partial("--quick")
        short = dict(steps=dict(n_steps=5, repeats=2), gridsearch=dict(repeats=2, max_epochs=1))
        short.update(threads=dict(max_epochs=1), workers=dict(n_fits=2, max_epochs=1), fit=dict(max_epochs=1))
    if cmd not in parts:
        sys.exit(f"deep_time: unknown part {cmd!r}; use {', '.join(parts)}.")
    if cmd != "report":
        STUDY.load_mnist()
    parts[cmd](**short.get(cmd, {}))
