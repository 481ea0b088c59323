"""Replay the class fractions from clusters, before and after the latent-space k-means, without fitting an S3VM.

``skssl.svm.defaults._cluster_fractions.fractions_from_clusters`` replaces the labels' class fractions by the clusters'
shares of the unlabeled rows where k-means' clusters are the classes. Since commit ``ef40da1`` rows of more
than ``LATENT_DIM`` (100) columns are clustered by direction in a truncated-SVD space of a canonical sample
(latent semantic analysis, then k-means on unit rows), no longer on the raw rows. This script asks, for every
(data set, label draw) of the groups ``dev``, ``heldout`` and ``unseen`` of ``user_value.py`` (its loaders,
splits, label draws and preprocessing), whether the rule's answer moved, which would move that benchmark's
S3VM cells.

The inputs are exactly those a default ``TransductiveSVC()`` fit inside ``user_value.py``'s pipeline hands the
rule (``DeterministicAnnealingSVC`` and ``PottsDeterministicAnnealingSVC`` hand it the same: no weights, all
classes at once): the pipeline is fitted with the rule replaced by a probe that keeps its arguments and stops
the fit. Both versions then run on them in this process: the current module, and the module of the commit
before the change (``OLD_COMMIT``), read with ``git show`` and imported under another name. Each call's CPU
time is ``time.process_time`` (this process and its threads, k-means' OpenMP threads included). Rows of at
most 100 columns take the same path in both versions and are listed as skipped.

Per (set, draw) the table gives the labels' fractions, the true fractions of the unlabeled rows (the hidden
labels), each version's answer (the labels' fractions kept, or the clusters' shares), the clusters' purity
(share of the labeled rows in their own class's cluster, ``MIN_PURITY`` = 0.9 needed) and the CPU seconds::

    python benchmarks/cluster_fractions_replay.py                       # dev, heldout, unseen; draws 0-4
    python benchmarks/cluster_fractions_replay.py --group dev --out benchmarks/results/cfr_dev.md
    python benchmarks/cluster_fractions_replay.py --merge LOG.jsonl [LOG.jsonl ...]
"""

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import user_value as uv
from _harness import ROOT, RESULTS_DIR, ResultsFile, add_allow_dirty, append_jsonl, markdown_table, provenance
from scipy.optimize import linear_sum_assignment

import skssl.svm._base as svm_base
import skssl.svm.defaults._cluster_fractions as new_module

RESULTS = RESULTS_DIR / "cluster_fractions_replay.md"
#: The last commit before the latent-space k-means (the parent of ef40da1).
OLD_COMMIT = "3abd52f04a1828fb14a6b61067549e617c0135b8"
GROUPS = ("dev", "heldout", "unseen")
DRAWS = 5  # as many as user_value.md holds for these groups
#: Two answers (shares) this close are the same outcome.
SAME = 1e-9


def load_old_module(folder):
    """The module ``_cluster_fractions`` of ``OLD_COMMIT``, written to ``folder`` and imported as its own module."""
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:skssl/svm/_cluster_fractions.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    relative = "from ._row_order import distinct_rows"
    if source.count(relative) != 1:
        raise RuntimeError(f"the module of {OLD_COMMIT} does not import distinct_rows as expected")
    # skssl.svm.kernels._row_order has not changed since OLD_COMMIT: the old module reads the same canonical order.
    source = source.replace(relative, "from skssl.svm.kernels._row_order import distinct_rows")
    path = Path(folder) / "_cluster_fractions_old.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("_cluster_fractions_old", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Captured(Exception):
    """Raised by the probe in place of the rule: carries the rule's arguments and stops the fit."""

    def __init__(self, args):
        super().__init__("captured")
        self.args_ = args


def rule_inputs(split):
    """``(X, y_enc, mask, fractions, sample_weight)`` as a default ``TransductiveSVC()`` fit of ``split`` passes
    them to ``fractions_from_clusters`` (the preprocessing fitted on all training rows, as ``user_value.py``)."""

    def probe(*args, clusters=None):  # the fit's shared k-means: the rules replayed compute their own
        raise _Captured(args)

    model = uv.make_pipeline_for(split, "tsvm")
    saved = svm_base.fractions_from_clusters
    svm_base.fractions_from_clusters = probe
    try:
        model.fit(split.X_train, split.y_semi)
    except _Captured as captured:
        return captured.args_
    finally:
        svm_base.fractions_from_clusters = saved
    raise RuntimeError("the fit never asked for the class fractions from clusters")


def run_rule(module, inputs):
    """``(answer, fired, purity, cpu_s)`` of ``module.fractions_from_clusters`` on ``inputs``.

    ``purity`` is the share of the labeled rows in their own class's cluster (clusters matched to classes as the
    rule matches them), read from the clusters the rule's own k-means returned; ``None`` where it ran none.
    """
    seen = {}
    kmeans = module._kmeans_labels

    def kept(*args):
        seen["clusters"] = kmeans(*args)
        return seen["clusters"]

    module._kmeans_labels = kept
    try:
        start = time.process_time()
        answer = module.fractions_from_clusters(*inputs)
        cpu = time.process_time() - start
    finally:
        module._kmeans_labels = kmeans
    purity = None
    if "clusters" in seen:
        _, y_enc, mask, fractions, _ = inputs
        n = fractions.shape[0]
        counts = np.zeros((n, n))
        np.add.at(counts, (seen["clusters"][mask], y_enc[mask]), 1.0)
        rows, cols = linear_sum_assignment(counts, maximize=True)
        purity = float(counts[rows, cols].sum() / counts.sum())
    return answer, answer is not fractions, purity, cpu


def replay(dataset, data, draw, old_module):
    """One (set, draw): its shape, the labels' and the true fractions, and both versions' answers."""
    split = dataset.protocol(data, draw)
    _, y_train, _, _ = uv._split(data, draw)
    X, y_enc, mask, fractions, weight = rule_inputs(split)
    classes = np.unique(split.y_semi[split.y_semi != -1])
    same_rows = np.array_equal(mask, split.y_semi != -1)
    if not (same_rows and np.array_equal(y_enc[mask], np.searchsorted(classes, split.y_semi[mask]))):
        raise RuntimeError(f"{dataset.name} draw {draw}: the fit's rows are not the split's")
    hidden = np.asarray(y_train)[~mask]
    truth = np.bincount(np.searchsorted(classes, hidden), minlength=len(classes)) / hidden.shape[0]
    rec = dict(
        dataset=dataset.name,
        group=dataset.group,
        kind=dataset.kind,
        draw=draw,
        n_rows=int(X.shape[0]),
        n_features=int(X.shape[1]),
        n_labeled=int(mask.sum()),
        sparse=bool(hasattr(X, "nnz")),
        labels=fractions.tolist(),
        truth=truth.tolist(),
        weighted=weight is not None,
    )
    if X.shape[1] <= new_module.LATENT_DIM:
        return dict(rec, status="skipped")
    rec["status"] = "ok"
    for name, module in (("old", old_module), ("new", new_module)):
        answer, fired, purity, cpu = run_rule(module, (X, y_enc, mask, fractions, weight))
        rec.update({name: answer.tolist(), f"{name}_fired": fired, f"{name}_purity": purity, f"{name}_cpu_s": cpu})
    return rec


# ---------------------------------------------------------------- the table


def _fracs(values):
    return " ".join(f"{v:.3f}" for v in values)


def _answer(rec, name):
    return f"shares {_fracs(rec[name])}" if rec[f"{name}_fired"] else "labels kept"


def _purity(rec, name):
    p = rec[f"{name}_purity"]
    return "–" if p is None else f"{p:.2f}"


def changed(rec):
    """Whether the two versions' outcomes differ: one keeps the labels and the other not, or other shares."""
    if rec["old_fired"] != rec["new_fired"]:
        return True
    return rec["old_fired"] and not np.allclose(rec["old"], rec["new"], atol=SAME, rtol=0)


def _abs_error(values, truth):
    return float(np.abs(np.asarray(values) - np.asarray(truth)).sum())


def render(records, header):
    ok = [r for r in records if r["status"] == "ok"]
    skipped = [r for r in records if r["status"] == "skipped"]
    parts = [header]
    head = [
        "set",
        "group",
        "draw",
        "rows x features",
        "labels' fractions",
        "truth (unlabeled rows)",
        "old",
        "new",
        "purity old / new",
        "CPU s old / new",
    ]
    rows = [
        [
            r["dataset"],
            r["group"],
            r["draw"],
            f"{r['n_rows']} x {r['n_features']}",
            _fracs(r["labels"]),
            _fracs(r["truth"]),
            _answer(r, "old"),
            _answer(r, "new"),
            f"{_purity(r, 'old')} / {_purity(r, 'new')}",
            f"{r['old_cpu_s']:.2f} / {r['new_cpu_s']:.2f}",
        ]
        for r in ok
    ]
    parts.append("## Every (set, draw) of more than 100 columns\n\n" + markdown_table(head, rows))
    moved = [r for r in ok if changed(r)]
    lines = [
        "## Summary\n",
        f"- (set, draw) pairs replayed: {len(ok)} on {len({r['dataset'] for r in ok})} sets; the outcome changed in "
        f"**{len(moved)}**"
        + (": " + ", ".join(f"{r['dataset']} draw {r['draw']}" for r in moved) + "." if moved else "."),
        f"- The rule fires: old in {sum(r['old_fired'] for r in ok)}, new in {sum(r['new_fired'] for r in ok)}.",
    ]
    for name in ("old", "new"):
        cpu = [r[f"{name}_cpu_s"] for r in ok]
        if cpu:
            worst = max(ok, key=lambda r: r[f"{name}_cpu_s"])
            lines.append(
                f"- CPU s, {name}: total {sum(cpu):.1f}, median {np.median(cpu):.2f}, largest "
                f"{worst[f'{name}_cpu_s']:.2f} ({worst['dataset']} draw {worst['draw']})."
            )
    per_set = {}
    for r in ok:
        per_set.setdefault(r["dataset"], []).append(r)
    cost = [
        [
            name,
            f"{rs[0]['n_rows']} x {rs[0]['n_features']}",
            len(rs),
            f"{np.mean([r['old_cpu_s'] for r in rs]):.2f}",
            f"{np.mean([r['new_cpu_s'] for r in rs]):.2f}",
        ]
        for name, rs in per_set.items()
    ]
    parts.append("\n".join(lines) + "\n")
    if moved:
        head = ["set", "draw", "old", "new", "truth", "|old - truth|_1", "|new - truth|_1"]
        rows = [
            [
                r["dataset"],
                r["draw"],
                _answer(r, "old"),
                _answer(r, "new"),
                _fracs(r["truth"]),
                f"{_abs_error(r['old'], r['truth']):.3f}",
                f"{_abs_error(r['new'], r['truth']):.3f}",
            ]
            for r in moved
        ]
        parts.append("### Changed outcomes\n\n" + markdown_table(head, rows))
    if cost:
        head = ["set", "rows x features (draw 0)", "draws", "mean CPU s old", "mean CPU s new"]
        parts.append("### Cost per set\n\n" + markdown_table(head, cost))
    if skipped:
        shapes = {}
        for r in skipped:
            shapes.setdefault((r["dataset"], r["group"]), set()).add(r["n_features"])
        lines = [
            f"- {name} ({group}): {'/'.join(str(n) for n in sorted(f))} columns, draws "
            f"{', '.join(str(r['draw']) for r in skipped if r['dataset'] == name)}"
            for (name, group), f in shapes.items()
        ]
        parts.append(
            "## Skipped: at most 100 columns (both versions run the same k-means there)\n\n" + "\n".join(lines) + "\n"
        )
    return "\n".join(parts)


def _header(argv, logs=None):
    source = f"Merged from {', '.join(f'`{log}`' for log in logs)}." if logs else provenance(argv)
    return (
        "# Class fractions from clusters: the rule before and after the latent-space k-means\n\n"
        f"{source}\n\n"
        f"Old: `skssl/svm/_cluster_fractions.py` at {OLD_COMMIT[:7]} (k-means on the raw rows, 3 restarts); new: "
        "the module of this commit (rows of more than 100 columns projected on 100 truncated-SVD directions of "
        "the canonical sample and normalised, 10 restarts). Inputs: those a default `TransductiveSVC()` fit in "
        "`user_value.py`'s pipeline gives the rule (stratified label draws). Fractions in the order of the "
        "classes; truth: the classes' fractions among the unlabeled rows (the hidden labels). Purity: share of "
        "the labeled rows in their own class's cluster (the rule needs 0.9). CPU: `time.process_time` of one "
        "call on a 2-core machine shared with other jobs, indicative only.\n"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", nargs="+", choices=GROUPS, default=list(GROUPS))
    parser.add_argument("--only", nargs="+", choices=list(uv.BY_NAME), metavar="NAME", help="these data sets only")
    parser.add_argument("--draws", type=int, default=DRAWS, help=f"label draws 0 .. DRAWS - 1 (default {DRAWS})")
    parser.add_argument("--merge", nargs="+", metavar="LOG", help="replay nothing: one table from these logs")
    parser.add_argument("--out", help="write a reduced run to this file (and .jsonl beside it)")
    add_allow_dirty(parser)
    args = parser.parse_args(argv)
    if args.merge:
        records = {}
        for log in args.merge:
            for line in Path(log).read_text().splitlines():
                rec = json.loads(line)
                records[(rec["dataset"], rec["draw"])] = rec
        order = {d.name: i for i, d in enumerate(uv.DATASETS)}
        records = sorted(records.values(), key=lambda r: (order[r["dataset"]], r["draw"]))
        expected = {(d.name, k) for d in uv.DATASETS if d.group in GROUPS for k in range(DRAWS)}
        missing = expected - {(r["dataset"], r["draw"]) for r in records}
        reduced = [f"the logs lack {len(missing)} (set, draw) pairs"] if missing else []
        results = ResultsFile(RESULTS, args.out, reduced=reduced, allow_dirty=args.allow_dirty)
        written = results.finish(render(records, _header(argv, args.merge)))
        with open(written.with_suffix(".jsonl"), "w") as out:
            out.writelines(json.dumps(rec) + "\n" for rec in records)
        print(written.read_text())
        return
    reduced = []
    if sorted(args.group) != sorted(GROUPS):
        reduced.append(f"--group {' '.join(args.group)} (full run: {' '.join(GROUPS)})")
    if args.only:
        reduced.append(f"--only {' '.join(args.only)}")
    if args.draws < DRAWS:
        reduced.append(f"--draws {args.draws} (full run: {DRAWS})")
    results = ResultsFile(RESULTS, args.out, reduced=reduced, allow_dirty=args.allow_dirty)
    log_path = results.partial.with_suffix(".jsonl")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    header = _header(argv)
    warnings.filterwarnings("ignore")
    datasets = [d for d in uv.DATASETS if d.group in args.group and (not args.only or d.name in args.only)]
    records = []
    with tempfile.TemporaryDirectory() as folder:
        old_module = load_old_module(folder)
        for dataset in datasets:
            data = None
            with results.skipping(dataset.name):
                data = dataset.load()
            if data is None:
                continue
            for draw in range(args.draws):
                rec = replay(dataset, data, draw, old_module)
                records.append(rec)
                append_jsonl(log_path, rec)
                shown = (
                    f"old {_answer(rec, 'old')} ({rec['old_cpu_s']:.2f}s), new {_answer(rec, 'new')} "
                    f"({rec['new_cpu_s']:.2f}s)"
                    if rec["status"] == "ok"
                    else f"skipped ({rec['n_features']} columns)"
                )
                print(dataset.name, draw, shown, flush=True)
            results.save_progress(render(records, header))
    written = results.finish(render(records, header))
    final_log = written.with_suffix(".jsonl")
    if final_log != log_path:
        log_path.replace(final_log)
    print(written.read_text())


if __name__ == "__main__":
    main()
