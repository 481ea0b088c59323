"""Adsh vs FixMatch on long-tailed MNIST at the Adsh paper's protocol (CPU)::

    python benchmarks/deep_long_tail.py [--quick] run [SEED ...]   # fits, appends to results/deep_long_tail.jsonl
    python benchmarks/deep_long_tail.py report           # writes results/deep_long_tail.md

Protocol (Guo & Li, "Class-Imbalanced Semi-Supervised Learning with Adaptive Thresholding", ICML 2022, section
5.1, there on CIFAR-10): class ``k = 0..9`` gets ``n_k = N1 * gamma^(-k/9)`` labeled and ``m_k = M1 *
gamma^(-k/9)`` unlabeled images (rounded), ``N1 = 1500``, ``M1 = 3000``, ``gamma = 100`` (the smallest class
keeps 15 and 30), drawn without replacement from the 60,000 MNIST training images per seed; digit ``k`` plays
the paper's class ``k + 1``. The test set is balanced: 892 test images of every digit (the smallest test class).

One schedule for all methods (a documented choice: FixMatch's default ``mu`` is 3, Adsh's 2): ``batch_size=32``,
``mu=2`` (the paper's ratio), Adam ``lr=1e-3``, ``iterations_per_epoch=50``, ``EPOCHS`` epochs, EMA weights for
prediction, default small CNN and augmentations, threshold 0.95 (FixMatch's fixed one, Adsh's majority-class
one). The supervised net is ``SupervisedNetClassifier(augment="weak")`` on the labeled rows, same steps and batch
size. Torch runs one intra-op thread (``torch.set_num_threads(1)``; ``results/deep_time.md`` says why).

Instrumentation (an epoch-end callback that reads but never changes the fit): weak views of the whole unlabeled
set through the current (non-EMA) module in eval mode -- what Adsh's epoch-end threshold update sees -- and the
masking policy's mask and pseudo-labels give, per class ``k``, the mask rate (fraction of the unlabeled images of
digit ``k`` that pass), the pseudo-label precision (fraction of the passing images labeled ``k`` that are digit
``k``) and the policy's per-class thresholds.

``--quick`` (one epoch) or ``DEEP_LONG_TAIL_EPOCHS`` below 20 write the partial log and report (``_deep.py``).
"""

import os
import sys

import numpy as np
from _deep import Study, class_counts, images, long_tail, parse_args
from _harness import markdown_table, timed

STUDY = Study("deep_long_tail")
N1, M1, GAMMA, K = 1500, 3000, 100, 10
TAIL = [7, 8, 9]
BATCH, MU, ITERS = 32, 2, 50
EPOCHS = int(os.environ.get("DEEP_LONG_TAIL_EPOCHS", 20))
METHODS = ("supervised", "FixMatch", "Adsh")
#: What the instrumentation records each epoch: its title in the per-epoch tables and its name in the final one.
RECORDED = {
    "class_thresholds": ("Per-class thresholds over training", "threshold"),
    "class_mask_rate": (
        "Per-class mask rate on the unlabeled set (fraction of each digit's unlabeled images kept)",
        "mask rate",
    ),
    "class_precision": ("Per-class pseudo-label precision of the kept images (- = none kept)", "precision"),
}


def split(seed):
    """Long-tailed labeled/unlabeled training rows and a balanced test set for one seed."""
    tr, te, rng = STUDY.train, STUDY.test, np.random.default_rng(seed)
    y_tr, y_te_all = tr["y"].astype(int), te["y"].astype(int)
    lab, unl = long_tail(y_tr, N1, M1, GAMMA, rng)
    per_class = np.bincount(y_te_all).min()
    i_te = np.concatenate([rng.permutation(np.flatnonzero(y_te_all == k))[:per_class] for k in range(K)])
    rows = np.concatenate([lab, unl])
    y_semi = np.concatenate([y_tr[lab], np.full(unl.shape[0], -1)])
    return images(tr["X"][rows]), y_semi, y_tr[rows], images(te["X"][i_te]), y_te_all[i_te]


def make_instrument(X_unl, y_unl):
    """Epoch-end callback recording per-class mask rate, pseudo-label precision and thresholds."""
    import torch
    from skorch.callbacks import Callback

    class PseudoLabelQuality(Callback):
        def on_epoch_end(self, net, **kwargs):
            policy = getattr(net, "masking_", None)  # None for the supervised net
            if policy is None:
                return
            module = net.module_
            was_training = module.training
            module.eval()
            probs = []
            # the fit runs under a seeded forked RNG: fork again so the weak views drawn
            # here do not advance the fit's own random stream
            with torch.no_grad(), torch.random.fork_rng():
                torch.manual_seed(12345)
                for s in range(0, X_unl.shape[0], 512):
                    xb = net.weak_augment_(torch.as_tensor(X_unl[s : s + 512]))
                    probs.append(torch.softmax(module(xb).float(), dim=1))
            module.train(was_training)
            mask, pseudo = (t.numpy() for t in policy.mask(torch.cat(probs)))
            passed = [mask & (pseudo == k) for k in range(K)]  # the images that pass with pseudo-label k
            precision = [float((y_unl[p] == k).mean()) if p.any() else None for k, p in enumerate(passed)]
            net.history.record("class_mask_rate", [float(mask[y_unl == k].mean()) for k in range(K)])
            net.history.record("class_precision", precision)
            net.history.record("class_thresholds", [float(t) for t in policy.thresholds_])

    return PseudoLabelQuality()


def run(seed, epochs=EPOCHS):
    import torch
    from sklearn.metrics import balanced_accuracy_score, recall_score

    from skssl.deep import AdshClassifier, FixMatchClassifier, SupervisedNetClassifier

    torch.set_num_threads(1)
    X, y_semi, y_true, X_te, y_te = split(seed)
    unl = y_semi == -1
    common = dict(batch_size=BATCH, iterations_per_epoch=ITERS, max_epochs=epochs, random_state=seed)
    for name in METHODS:
        if name == "supervised":
            est = SupervisedNetClassifier(augment="weak", **common)
            Xf, yf = X[~unl], y_semi[~unl]
        else:
            cls = FixMatchClassifier if name == "FixMatch" else AdshClassifier
            est = cls(mu=MU, callbacks=[("quality", make_instrument(X[unl], y_true[unl]))], **common)
            Xf, yf = X, y_semi
        with timed() as t:
            est.fit(Xf, yf)
        pred = est.predict(X_te)
        rec = recall_score(y_te, pred, labels=list(range(K)), average=None)
        row = dict(seed=seed, method=name, epochs=epochs, steps=epochs * ITERS, n_labeled=int((~unl).sum()))
        row.update(n_unlabeled=int(unl.sum()), n_test=int(y_te.shape[0]))
        row.update(balanced_acc=float(balanced_accuracy_score(y_te, pred)), tail_recall=float(np.mean(rec[TAIL])))
        row.update(recall=[round(float(r), 4) for r in rec], cpu_s=round(t.cpu, 1), wall_s=round(t.wall, 1))
        row["torch"] = torch.__version__
        if name != "supervised":
            h = est.history
            row["mask_rate"] = [float(v) for v in h[:, "mask_rate"]]
            row.update({key: h[:, key] for key in ("class_mask_rate", "class_precision", "class_thresholds")})
        STUDY.add(row, show={k: v for k, v in row.items() if not k.startswith("class_")})


def _fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def report():
    rows = {(r["method"], r["seed"]): r for r in STUDY.rows()}  # the last run of a (method, seed) wins
    seeds = sorted({s for _, s in rows})
    methods = [m for m in METHODS if any((m, s) in rows for s in seeds)]
    a = next(iter(rows.values()))
    intro = [
        f"torch {a['torch']}, one intra-op thread, 2 CPU cores shared with other jobs (wall times inflated; CPU "
        "seconds are the process's own).",
        "",
        f"Data: N1 = {N1}, M1 = {M1}, gamma = {GAMMA}: labeled per class {class_counts(N1, GAMMA)}, unlabeled per "
        f"class {class_counts(M1, GAMMA)} ({a['n_labeled']} labeled, {a['n_unlabeled']} unlabeled) drawn "
        f"from the MNIST training set per seed; balanced test set of {a['n_test']} images. "
        f"Tail = the three smallest classes {TAIL}.",
        f"Schedule shared by all methods: batch_size={BATCH}, mu={MU}, {ITERS} steps per epoch, "
        f"{a['epochs']} epochs ({a['steps']} steps), Adam lr 1e-3, threshold 0.95, default CNN and "
        "augmentations; the supervised net trains on the labeled rows only with the weak augmentation.",
    ]
    out = ["## Balanced accuracy and tail recall", ""]
    header = ["method"] + [f"seed {s} bal. acc / tail" for s in seeds]
    table = []
    for m in methods:
        rs = [rows.get((m, s)) for s in seeds]
        got = [r for r in rs if r]
        cells = [f"{r['balanced_acc']:.3f} / {r['tail_recall']:.3f}" if r else "-" for r in rs]
        means = [np.mean([r[k] for r in got]) for k in ("balanced_acc", "tail_recall", "cpu_s")]
        table.append([m, *cells, f"{means[0]:.3f}", f"{means[1]:.3f}", f"{means[2]:.0f}"])
    out.append(markdown_table(header + ["mean bal. acc", "mean tail recall", "CPU s per fit"], table))
    out.append("## Recall per class (mean over seeds)\n")
    table = []
    for m in methods:
        mean = np.mean([rows[(m, s)]["recall"] for s in seeds if (m, s) in rows], axis=0)
        table.append([m] + [f"{v:.3f}" for v in mean])
    out.append(markdown_table(["method", *range(K)], table))
    for key, (title, _) in RECORDED.items():
        out.append(f"## {title} (seed {seeds[0]}; epoch-end, weak views, current module)\n")
        table = []
        for m in methods:
            hist = rows.get((m, seeds[0]), {}).get(key)
            for e in sorted({0, 1, 4, 9, len(hist) // 2 - 1, len(hist) - 1}) if hist else []:
                if 0 <= e < len(hist) and hist[e] is not None:
                    table.append([m, e + 1] + [_fmt(v) for v in hist[e]])
        out.append(markdown_table(["method", "epoch", *range(K)], table))
    # seed-averaged final-epoch instrumentation: the evidence for the verdict
    out.append("## Final epoch, mean over seeds\n")
    table = []
    for m in methods:
        got = [rows[(m, s)] for s in seeds if (m, s) in rows and "class_mask_rate" in rows[(m, s)]]
        for key, (_, label) in RECORDED.items():
            if got:
                vals = np.array([[np.nan if v is None else v for v in r[key][-1]] for r in got], dtype=float)
                mean = [None if np.all(np.isnan(c)) else float(np.nanmean(c)) for c in vals.T]
                table.append([m, label] + [_fmt(v) for v in mean])
    out.append(markdown_table(["method", "quantity", *range(K)], table))
    runs = f" (runs: `python benchmarks/deep_long_tail.py run {' '.join(map(str, seeds))}`)"
    STUDY.write_report("Adsh vs FixMatch on long-tailed MNIST at the Adsh paper's protocol", intro, out, runs)


if __name__ == "__main__":
    cli = parse_args(__doc__, ["run"])
    STUDY.allow_dirty = cli.allow_dirty
    cmd, *args = cli.parts
    if cli.quick or EPOCHS < 20:
        STUDY.partial("--quick or DEEP_LONG_TAIL_EPOCHS below 20")
    if cmd == "report":
        report()
    elif cmd == "run":
        STUDY.load_mnist()
        for seed in [int(a) for a in args] or [0, 1, 2]:
            run(seed, 1 if cli.quick else EPOCHS)
    else:
        sys.exit(f"deep_long_tail: unknown part {cmd!r}; use run or report.")
