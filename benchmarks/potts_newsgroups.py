"""Potts-glass DA against one-vs-rest S3VMs on 20 Newsgroups, all 20 classes::

    python benchmarks/potts_newsgroups.py [DATA_DIR] [--seeds 0 1 2] [--labels 5 20] [--train-rows N]

Data: the 20 Newsgroups "bydate" archive (``DATA_DIR/20news-bydate.tgz`` or ``fetch_20newsgroups_bydate``),
``TfidfVectorizer(min_df=2)`` fitted on the training split (11,314 x 53,724), the test split (7,532 rows) through
it. ``--train-rows N`` keeps ``np.sort(RandomState(1234).choice(11314, N))`` training rows (after the vectorizer
is fitted), labeled ``20ng-N``, in the git-ignored ``potts_newsgroups.partial.{jsonl,md}``. Labeled rows:
``make_semi_supervised(y, n, per_class=True, random_state=seed)``, n in {5, 20} per class, seeds 0-2; the S3VMs
get the true class fractions of the unlabeled rows (Potts and every one-vs-rest problem alike).

Methods (alpha = 1e-3, unlabeled_weight = 1): ``PottsDeterministicAnnealingSVC``, one-vs-rest
``DeterministicAnnealingSVC`` and ``TransductiveSVC``, ``LinearL2SVC``, sklearn's ``LinearSVC()`` on the labeled
rows and ``SelfTrainingClassifier(LogisticRegression(C=10))``; ``--methods "Potts DA (defaults)" "OvR TSVM
(defaults)"`` adds the two estimators with all their defaults.

Measured per fit: test accuracy and macro-F1, CPU seconds of ``fit`` (one BLAS/OpenMP thread, joblib
``n_jobs=None``), the peak growth of the resident set during ``fit`` (``_harness.timed(memory=True)``; rows
logged before 2026-11-24 sampled ``/proc/self/statm`` every 10 ms, which misses short peaks). The script
re-executes itself with ``MALLOC_MMAP_THRESHOLD_=131072`` so that every large array is its own mapping, returned
when freed. For the S3VMs also the zero-temperature Potts objective of the returned K linear models, the class
fractions of the transductive labels against the true ones, and per-class test recall. A binary row compares
the K = 2 Potts model with the binary DA on pcmac (r = 0.5): CPU seconds (minimum of 3 alternating fits),
objective and test accuracy.

Each fit is appended to ``results/potts_newsgroups.jsonl`` as it ends (keyed by data, labels, seed and method)
and ``potts_newsgroups.md`` is rebuilt from the whole log after every fit, so runs side by side share it.
"""

import argparse
import os
import sys

if os.environ.get("MALLOC_MMAP_THRESHOLD_") is None and __name__ == "__main__":
    # Fixed mmap threshold: large arrays are mapped and unmapped, so RSS tracks them (see docstring).
    os.environ["MALLOC_MMAP_THRESHOLD_"] = "131072"
    os.execv(sys.executable, [sys.executable, *sys.argv])

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from pathlib import Path

import numpy as np
from _harness import (
    RESULTS_DIR,
    add_allow_dirty,
    append_jsonl,
    check_publishable,
    markdown_table,
    partial_path,
    provenance,
    read_jsonl,
    timed,
)
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, recall_score
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import LinearSVC

from skssl.datasets import DatasetUnavailableError, fetch_20newsgroups_bydate, load_pcmac, make_semi_supervised
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.solvers._potts import potts_objective

ALPHA, LAM_U = 1e-3, 1.0
JSONL = RESULTS_DIR / "potts_newsgroups.jsonl"
MD = RESULTS_DIR / "potts_newsgroups.md"
ALLOW_DIRTY = False  # --allow-dirty
NOTES = RESULTS_DIR / "potts_newsgroups_notes.md"
METHODS = ["Potts DA", "OvR DA", "OvR TSVM", "LinearL2SVC", "LinearSVC", "SelfTraining(LogReg C=10)"]
#: The estimators with every default (alpha="auto", class fractions estimated from the labeled rows, the
#: safeguard): not run unless named in ``--methods``.
DEFAULT_METHODS = ["Potts DA (defaults)", "OvR TSVM (defaults)"]


def make(name, r):
    """The estimator ``name`` with the true class fractions ``r`` where it takes them."""
    common = dict(unlabeled_weight=LAM_U, positive_fraction=r)
    return {
        "Potts DA (defaults)": lambda: PottsDeterministicAnnealingSVC(),
        "OvR TSVM (defaults)": lambda: TransductiveSVC(),
        "Potts DA": lambda: PottsDeterministicAnnealingSVC(ALPHA, **common),
        "OvR DA": lambda: DeterministicAnnealingSVC(ALPHA, **common),
        "OvR TSVM": lambda: TransductiveSVC(ALPHA, **common),
        "LinearL2SVC": lambda: LinearL2SVC(ALPHA),
        "LinearSVC": lambda: LinearSVC(),
        "SelfTraining(LogReg C=10)": lambda: SelfTrainingClassifier(LogisticRegression(C=10, max_iter=1000)),
    }[name]()


def run_20ng(raw, seeds, labels, methods, done, train_rows=None):
    vectorizer = TfidfVectorizer(min_df=2)
    X = vectorizer.fit_transform(raw.data_train).tocsr()
    X_test = vectorizer.transform(raw.data_test).tocsr()
    y, y_test = raw.target_train, raw.target_test
    tag = "20ng"
    if train_rows:
        keep = np.sort(np.random.RandomState(1234).choice(X.shape[0], train_rows, replace=False))
        X, y = X[keep], y[keep]
        tag = f"20ng-{train_rows}"
    K = len(raw.target_names)
    Y = np.where(y[:, None] == np.arange(K), 1.0, -1.0)
    print(f"20NG: X {X.shape}, nnz {X.nnz}, test {X_test.shape}, {K} classes", flush=True)
    for seed in seeds:
        for n in labels:
            y_semi = make_semi_supervised(y, n, per_class=True, random_state=seed)
            unl = y_semi == -1
            r = np.bincount(y[unl], minlength=K) / unl.sum()
            for name in methods:
                key = f"{tag}|{n}|{seed}|{name}"
                if key in done:
                    continue
                est = make(name, r)
                X_fit, y_fit = (X[~unl], y[~unl]) if name == "LinearSVC" else (X, y_semi)
                with timed(memory=True) as t:  # CPU seconds and peak RSS growth (MB) of the fit
                    est.fit(X_fit, y_fit)
                cpu, peak = t.cpu, t.rss_growth_mb
                pred = est.predict(X_test)
                row = dict(key=key, data=tag, labels_per_class=n, seed=seed, method=name)
                row.update(
                    accuracy=float(np.mean(pred == y_test)), macro_f1=float(f1_score(y_test, pred, average="macro"))
                )
                # rows without peak_measure sampled RSS every 10 ms (a lower bound)
                row.update(cpu_s=cpu, peak_mb=peak, peak_measure="VmHWM")
                row["recall"] = recall_score(y_test, pred, average=None).tolist()
                if hasattr(est, "coef_"):
                    outputs = np.asarray(X @ est.coef_.T + est.intercept_)
                    row["potts_objective"] = potts_objective(est.coef_, est.intercept_, outputs, Y, ~unl, ALPHA, LAM_U)
                    trans = outputs[unl].argmax(axis=1)
                    row["transductive_accuracy"] = float(np.mean(trans == y[unl]))
                    row["fraction_error"] = float(np.abs(np.bincount(trans, minlength=K) / unl.sum() - r).max())
                if name == "Potts DA":
                    row.update(n_iter=est.n_iter_, objective_=est.objective_)
                elif name in ("OvR DA", "OvR TSVM"):
                    row.update(n_iter=est.n_iter_, sum_binary_objectives=float(np.sum(est.objective_)))
                shown = f"cpu {cpu:.1f}s peak {peak:.1f}MB obj {row.get('potts_objective', float('nan')):.6g}"
                print(f"{key}: acc {row['accuracy']:.4f} F1 {row['macro_f1']:.4f} {shown}", flush=True)
                append_jsonl(JSONL, row)
                done[key] = row
                write_md(done)


def run_pcmac(done, repeats=3):
    if "pcmac|K=2" in done:
        return
    data = load_pcmac()
    X, y = data.X_train, data.y_train
    classes = {"Potts DA (K=2)": PottsDeterministicAnnealingSVC, "binary DA": DeterministicAnnealingSVC}
    times, models = {name: [] for name in classes}, {}
    for _ in range(repeats):
        for name, cls in classes.items():
            est = cls(ALPHA, unlabeled_weight=LAM_U, positive_fraction=0.5)
            with timed() as t:
                est.fit(X, y)
            times[name].append(t.cpu)
            models[name] = est
    row = {"key": "pcmac|K=2", "data": "pcmac"}
    for name, est in models.items():
        row[name] = dict(
            cpu_s_min=min(times[name]), cpu_s_all=times[name], objective=float(np.ravel(est.objective_)[0])
        )
        row[name].update(accuracy=float(np.mean(est.predict(data.X_test) == data.y_test)), n_iter=est.n_iter_)
    print(f"pcmac: {row}", flush=True)
    append_jsonl(JSONL, row)
    done[row["key"]] = row
    write_md(done)


def _ms(values, spec):
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return "–"
    if values.size == 1:
        return format(values[0], spec)
    return f"{format(values.mean(), spec)} ± {format(values.std(), spec)}"


def write_md(done):
    done = {**done, **{row["key"]: row for row in read_jsonl(JSONL)}}  # rows written by runs side by side
    rows = [r for r in done.values() if r["data"].startswith("20ng")]
    lines = [
        "# Potts DA vs one-vs-rest on 20 Newsgroups (20 classes)",
        "",
        "Written by `python benchmarks/potts_newsgroups.py ../shared/data` (see its docstring for the protocol). Mean "
        "± standard deviation over the seeds run (n = number of seeds). CPU seconds of `fit`, one thread; peak MB is "
        "the growth of the resident set during `fit` (its high-water mark; the rows logged before 2026-11-24, without "
        "`peak_measure` in the log, sampled it every 10 ms, which misses short peaks: a lower bound, about 10 MB under "
        "the high-water mark for LinearL2SVC at 5 labels/class). `obj` is the zero-temperature Potts objective of the "
        "returned K linear models on the training rows (lower is better for the multi-class S3VM objective); `frac "
        "err` the largest gap between a class's share of the transductive labels (argmax of the outputs on the "
        "unlabeled rows) and its true share.",
        "",
        f"Table last rewritten by: {provenance()}",
        "",
        NOTES.read_text().strip(),  # hand-written: how the committed rows were run
        "",
    ]
    header = ["train rows", "labels/class", "method", "n", "test acc %", "macro-F1 %", "transd. acc %", "obj"]
    header += ["frac err", "CPU s", "peak MB"]
    by = {}  # (data, labels per class, method) -> its runs, in log order
    for r in rows:
        by.setdefault((r["data"], r["labels_per_class"], r["method"]), []).append(r)
    groups, table = sorted({(data, n) for data, n, _ in by}), []
    for data, n in groups:
        for name in [m for m in METHODS + DEFAULT_METHODS if (data, n, m) in by]:
            sel = by[(data, n, name)]
            get = lambda k, sel=sel: [r[k] for r in sel if k in r]  # noqa: E731
            cells = [data, n, name, len(sel)]
            cells += [_ms(np.array(get(k)) * 100, ".1f") for k in ("accuracy", "macro_f1", "transductive_accuracy")]
            cells += [_ms(get("potts_objective"), ".4f"), _ms(get("fraction_error"), ".3f")]
            table.append(cells + [_ms(get("cpu_s"), ".1f"), _ms(get("peak_mb"), ".0f")])
    lines.append(markdown_table(header, table).rstrip("\n"))
    ratios = [
        f"{r['data']}/{r['labels_per_class']}/seed {r['seed']}: {r['cpu_s'] / other['cpu_s']:.2f}"
        for r in rows
        if r["method"] == "Potts DA" and (other := done.get(r["key"].replace("|Potts DA", "|OvR DA")))
    ]
    if ratios:
        lines += ["", "CPU time of Potts DA over one-vs-rest DA, per run: " + "; ".join(ratios) + "."]
    for data, n in groups:  # per-class recall, mean over the runs
        names = [m for m in ("Potts DA", "OvR DA", "LinearSVC") if (data, n, m) in by]
        rec = {m: np.mean([r["recall"] for r in by[(data, n, m)]], axis=0) for m in names}
        if len(rec) >= 2:
            lines += ["", f"Per-class test recall % on {data} at {n} labels/class (mean over seeds):", ""]
            recall = [[k] + [f"{rec[m][k] * 100:.1f}" for m in names] for k in range(len(rec[names[0]]))]
            lines.append(markdown_table(["class"] + names, recall).rstrip("\n"))
    if "pcmac|K=2" in done:
        p = done["pcmac|K=2"]
        lines += [
            "",
            "Binary check, pcmac (SVMlin's split, 50 labeled rows, r = 0.5); CPU s is the minimum of 3 "
            "alternating fits:",
            "",
        ]
        header = ["method", "test acc %", "objective", "n_iter_ (temperatures)", "CPU s (min of 3)"]
        binary = [
            [name, f"{q['accuracy'] * 100:.1f}", f"{q['objective']:.6f}", q["n_iter"], f"{q['cpu_s_min']:.2f}"]
            for name, q in ((name, p[name]) for name in ("Potts DA (K=2)", "binary DA"))
        ]
        lines.append(markdown_table(header, binary).rstrip("\n"))
    text = "\n".join(lines) + "\n"
    if MD != partial_path(MD):  # the committed table: reproducible from the repository
        text = check_publishable(text, allow_dirty=ALLOW_DIRTY)
    MD.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=None, help="folder holding 20news-bydate.tgz")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--labels", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS + DEFAULT_METHODS)
    parser.add_argument("--train-rows", type=int, default=None, help="subsample the training split")
    parser.add_argument("--fresh", action="store_true", help="ignore the rows already in the .jsonl")
    parser.add_argument("--no-pcmac", action="store_true", help="skip the binary pcmac row")
    add_allow_dirty(parser)
    args = parser.parse_args()
    global ALLOW_DIRTY
    ALLOW_DIRTY = args.allow_dirty
    try:
        raw = fetch_20newsgroups_bydate(None if args.data_dir is None else Path(args.data_dir) / "20news-bydate.tgz")
    except DatasetUnavailableError as exc:
        print(f"potts_newsgroups: nothing to benchmark: {exc}")
        return
    if args.train_rows:  # another problem than the committed rows': the git-ignored log and table
        global JSONL, MD
        JSONL, MD = partial_path(JSONL), partial_path(MD)
        print(f"--train-rows: rows go to {JSONL} and {MD}, not the committed files", flush=True)
    done = {} if args.fresh else {row["key"]: row for row in read_jsonl(JSONL)}
    if not args.no_pcmac:
        run_pcmac(done)
    run_20ng(raw, args.seeds, args.labels, args.methods, done, args.train_rows)
    write_md(done)


if __name__ == "__main__":
    main()
