"""Replay the safeguard's cross-validated check: log what it sees once, then judge rules for it offline.

The check of ``safeguard="cross_validation"`` (and of ``"auto"`` where it runs) compares, on folds of the
labeled rows, the semi-supervised fit with the supervised ``LinearL2SVC`` and returns the latter when it
classifies more held-out labels right (``DeterministicAnnealingSVC``: unless its own model leads by over one
standard error of the difference; ``skssl.svm.safeguard._fallback_check``). Which rule should decide between the
two (ties, a margin, where the check runs at all) is a question of measurement, and each rule would cost a
full run of ``user_value.py``. This script fits each S3VM once per set and label draw with
``safeguard="cross_validation"``, the protocol of ``user_value.py`` (its data sets, splits and pipelines),
and logs:

* the shape: labeled rows, features after the preprocessing, distinct labeled rows, and whether
  ``safeguard="auto"`` runs the check there;
* the check's held-out scores (supervised, semi-supervised) and the weights of the held-out rows on which
  exactly one of the two is right (``b``: the supervised model, ``c``: the semi-supervised one);
* the test accuracy of the agreement's model (the semi-supervised answer before the check) and of the
  supervised ``LinearL2SVC`` the check falls back to.

A rule maps these to one of the two models, so its test accuracy per set and draw follows without a fit.
``--replay`` renders, per group of ``user_value.py`` and over all sets replayed, each rule's mean gain over
the better of ``LogisticRegression()`` and ``LinearSVC()`` (read from ``results/user_value.jsonl``: same
splits, same baselines) with wins / ties / losses at one point, and checks that the rule built into skssl
(``BUILT``, marked "as built" in the tables) reproduces the logged cells of ``user_value.py``.

How a rule is chosen (fixed before the first replay, 2026-11-26): for each estimator, the rule with the
highest mean gain over the tabular sets and digits of the groups replayed, each set counted once, provided it
does not lower the development or the held-out mean by more than 0.2 points against the rule as built; it
then has to pass a fresh batch listed before the replay (``fresh7`` of ``user_value.py``), which the replay
that chooses does not include: there it must give at least the mean gain of the rule as built and no more
losses of more than a point.

Commands::

    python benchmarks/safeguard_replay.py --methods tsvm --log LOG.jsonl [--group G ...] [--only NAME ...]
    python benchmarks/safeguard_replay.py --replay LOG.jsonl [LOG.jsonl ...] [--out FILE]

Fits run on tabular sets and digits, where ``"auto"`` can run the check (text has far more features than
labels).
"""

import argparse
import json
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import user_value as uv
from _harness import RESULTS_DIR, ResultsFile, add_allow_dirty, append_jsonl, markdown_table, provenance, timed

import skssl.svm._base as svm_base
from skssl.svm import LinearL2SVC
from skssl.svm.kernels._row_order import distinct_rows
from skssl.svm.safeguard._fallback_check import FoldComparison, asks_held_out_labels, prefers_supervised

RESULTS = RESULTS_DIR / "safeguard_replay.md"
METHODS = ("tsvm", "da", "potts")


# ---------------------------------------------------------------- logging what the check sees


class _Probe:
    """Wraps the check's two steps inside skssl for one fit and keeps what they saw."""

    def __init__(self):
        self.semi = None  # (coef_, intercept_) of the model before the check
        self.discordant = None  # (b, c)

    def __enter__(self):
        self._fall_back = svm_base._LinearFitMixin._fall_back_where_held_out_labels_say
        self._scores = svm_base.compare_on_folds
        probe = self

        def fall_back(est, *args):
            probe.semi = (est.coef_.copy(), est.intercept_.copy())
            return probe._fall_back(est, *args)

        def scores(*args, **settling):
            # Every fold, not only those that settle the estimator's rule: the replay judges other rules too.
            result = probe._scores(*args)
            if result is not None:
                probe.discordant = result.discordant.tolist()
            return result

        svm_base._LinearFitMixin._fall_back_where_held_out_labels_say = fall_back
        svm_base.compare_on_folds = scores
        return self

    def __exit__(self, *exc):
        svm_base._LinearFitMixin._fall_back_where_held_out_labels_say = self._fall_back
        svm_base.compare_on_folds = self._scores


def probe_fit(split, method):
    """One fit of ``method`` with the check everywhere, and what a rule needs to replay it.

    The supervised model is ``LinearL2SVC()`` on the labeled rows: the check's fallback for an estimator with
    the default ``alpha``, ``intercept_scaling`` and ``class_weight``, as ``user_value.py`` fits them.
    """
    model = uv.make_pipeline_for(split, method, "cross_validation")
    with _Probe() as probe, timed() as t:
        model.fit(split.X_train, split.y_semi)
    estimator = model[-1]
    X_train = model[:-1].transform(split.X_train) if len(model) > 1 else split.X_train
    X_test = model[:-1].transform(split.X_test) if len(model) > 1 else split.X_test
    labeled = np.flatnonzero(split.y_semi != -1)
    checked_coef = estimator.coef_, estimator.intercept_
    estimator.coef_, estimator.intercept_ = probe.semi
    acc_semi = float(np.mean(estimator.predict(X_test) == split.y_test))
    estimator.coef_, estimator.intercept_ = checked_coef
    supervised = LinearL2SVC().fit(X_train[labeled], split.y_semi[labeled])
    acc_supervised = float(np.mean(supervised.predict(X_test) == split.y_test))
    scores = estimator.safeguard_scores_
    _, distinct = distinct_rows(X_train[labeled])
    return dict(
        n_labeled=len(labeled),
        n_features=X_train.shape[1],
        n_distinct=int(np.unique(distinct).size),
        auto_checks=bool(asks_held_out_labels("auto", X_train, labeled)),
        scores=None if scores is None else [float(s) for s in scores],
        discordant=None if scores is None else list(probe.discordant),
        acc_semi=acc_semi,
        acc_supervised=acc_supervised,
        acc_checked=float(np.mean(model.predict(split.X_test) == split.y_test)),
        fit_cpu_s=round(t.cpu, 3),
    )


# ---------------------------------------------------------------- the rules


def _falls_back(rec, margin):
    """Whether the check returns the supervised model: unless the semi-supervised one is ahead by
    ``margin`` standard errors of the paired difference (``sqrt(b + c)``, McNemar's); ``margin=None``: the
    supervised model must be strictly ahead. skssl's own decision (``_fallback_check.prefers_supervised``)."""
    if rec["scores"] is None:
        return False
    comparison = FoldComparison(np.asarray(rec["scores"]), np.asarray(rec["discordant"]))
    return prefers_supervised(comparison, margin)


RULES = {
    "agreement": lambda rec: False,
    "auto": lambda rec: rec["auto_checks"] and _falls_back(rec, None),
    "auto, ties fall back": lambda rec: rec["auto_checks"] and _falls_back(rec, 0.0),
    "auto, margin 1 s.e.": lambda rec: rec["auto_checks"] and _falls_back(rec, 1.0),
    "everywhere": lambda rec: _falls_back(rec, None),
    "everywhere, ties fall back": lambda rec: _falls_back(rec, 0.0),
    "everywhere, margin 1 s.e.": lambda rec: _falls_back(rec, 1.0),
    "supervised only": lambda rec: True,
}

#: The rule each estimator has built in: ``safeguard="auto"`` (``BUILT``) and ``safeguard="cross_validation"``
#: (``CHECKED``, the probe's own fit). DA's margin was chosen by this replay and judged on ``fresh7``
#: (2026-11-26); before, every estimator had "auto" and "everywhere".
BUILT = {"tsvm": "auto", "da": "auto, margin 1 s.e.", "potts": "auto"}
CHECKED = {"tsvm": "everywhere", "da": "everywhere, margin 1 s.e.", "potts": "everywhere"}


def accuracy_under(rule, rec):
    """Test accuracy of the model ``rule`` returns for the logged fit ``rec``."""
    return rec["acc_supervised"] if RULES[rule](rec) else rec["acc_semi"]


def replay(records, baselines):
    """``{(method, group, rule): {data set: gain in points}}``, the mean over draws of each set."""
    acc = defaultdict(list)
    for rec in records:
        for rule in RULES:
            acc[rec["method"], rec["group"], rule, rec["dataset"]].append(accuracy_under(rule, rec))
    out = defaultdict(dict)
    for (method, group, rule, name), values in acc.items():
        if name in baselines:
            out[method, group, rule][name] = 100 * (np.mean(values) - baselines[name])
    return out


def load_baselines(paths=None):
    """``({data set: better mean accuracy of logreg and linearsvc}, {(set, draw, method): accuracy})`` from the
    logs of ``user_value.py`` runs (default: ``results/user_value.jsonl``); the means are ``user_value``'s own."""
    paths = [Path(p) for p in paths] if paths else [uv.RESULTS.with_suffix(".jsonl")]
    logged = [json.loads(line) for path in paths for line in path.read_text().splitlines()]
    cells = {(r["dataset"], r["draw"], r["method"]): r["accuracy"] for r in logged if r["status"] == "ok"}
    means = uv.summarize(logged)
    best = {}
    for name in {r["dataset"] for r in logged}:
        base = [means.get((name, m), {}).get("acc") for m in uv.SUPERVISED]
        if all(b is not None for b in base):
            best[name] = max(base) / 100
    return best, cells


def _summary(gains):
    """``"W / T / L, mean"`` of ``{data set: gain}`` (``"–"`` when empty)."""
    return uv.record_text(gains.values(), digits=2) if gains else "–"


def render(records, header, baseline_logs=None):
    baselines, cells = load_baselines(baseline_logs)
    gains = replay(records, baselines)
    same = [
        accuracy_under(BUILT[r["method"]], r) == cells[r["dataset"], r["draw"], r["method"]]
        for r in records
        if (r["dataset"], r["draw"], r["method"]) in cells
    ]
    logs = ", ".join(f"`{p}`" for p in baseline_logs) if baseline_logs else "`results/user_value.jsonl`"
    parts = [header, f"The rule built into skssl, replayed, gives {sum(same)} of the {len(same)} logged cells of "
             f"{logs} that these fits cover, to the last digit.\n"]  # fmt: skip
    groups = [g for g in dict.fromkeys(d.group for d in uv.DATASETS) if any(r["group"] == g for r in records)]
    for method in [m for m in METHODS if any(r["method"] == m for r in records)]:
        rows = []
        for rule in RULES:
            row = [f"{rule} (as built)" if rule == BUILT[method] else rule]
            pooled = {}
            for group in groups:
                g = gains.get((method, group, rule))
                pooled.update(g or {})
                row.append(_summary(g))
            rows.append([*row, _summary(pooled)])
        parts.append(f"## {uv.LABELS[method]}\n\n" + markdown_table(["rule", *groups, "all"], rows))
    return "\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument(
        "--group", nargs="+", default=None, help="these groups of user_value.py (default: all not held back)"
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these data sets only")
    parser.add_argument("--log", help="append the logged fits to this JSON lines file")
    parser.add_argument("--replay", nargs="+", metavar="LOG", help="fit nothing: replay the rules on these logs")
    parser.add_argument("--out", help="write the replay's table here instead of results/safeguard_replay.md")
    parser.add_argument(
        "--baselines", nargs="+", metavar="LOG", help="user_value.py logs with the baselines (default: its results)"
    )
    add_allow_dirty(parser)
    args = parser.parse_args(argv)
    if args.replay:
        records = [json.loads(line) for log in args.replay for line in Path(log).read_text().splitlines()]
        results = ResultsFile(RESULTS, args.out, allow_dirty=args.allow_dirty)
        header = f"# The safeguard's check, replayed\n\n{provenance(argv)}\n"
        print(results.finish(render(records, header, args.baselines)).read_text())
        return
    if not args.log:
        parser.error("--log is needed to fit (or give --replay)")
    held_back = [n for n in args.only or () if not any(uv.runs_in(uv.BY_NAME[n], g) for g in args.group or ["all"])]
    if held_back:
        parser.error(f"{', '.join(held_back)}: held back (user_value.HELD_BACK) or outside --group; name its --group")
    warnings.filterwarnings("ignore")  # convergence warnings of the defaults; accuracy tells
    for dataset in uv.DATASETS:
        if dataset.kind == "text" or not any(uv.runs_in(dataset, g) for g in args.group or ["all"]):
            continue
        if (args.only and dataset.name not in args.only) or (dataset.kind == "images" and dataset.name != "digits"):
            continue
        data = dataset.load()
        for draw in range(uv.DRAWS):
            split = dataset.protocol(data, draw)
            n_classes = len(np.unique(split.y_semi[split.y_semi != -1]))
            for method in args.methods:
                if uv.skip_reason(method, len(split.y_semi), n_classes):
                    continue
                rec = dict(dataset=dataset.name, group=dataset.group, draw=draw, method=method)
                rec.update(probe_fit(split, method))
                append_jsonl(args.log, rec)
                print(dataset.name, draw, method, rec["scores"], rec["acc_semi"], rec["acc_supervised"], flush=True)


if __name__ == "__main__":
    main()
