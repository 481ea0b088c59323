"""n_jobs=2 against n_jobs=1 on a busy machine and on an idle one, before and after the thread schedule.

A two-thread fit runs its row blocks on OpenMP threads that meet at a barrier several times per CGLS
iteration; when other processes keep every core busy, one thread is often descheduled while the other spins,
and ``n_jobs=2`` was several times slower than ``n_jobs=1``. Since then a fit's
:class:`~skssl.svm._kernels.ThreadSchedule` times CGLS's iterations on one thread and on two and keeps the
faster (:mod:`skssl.svm._rowblocks`). ``before`` is ``THREAD_MODE = "fixed"`` (all ``n_jobs`` threads always),
``after`` the default ``"adaptive"``::

    python benchmarks/busy_machine.py [DATA_DIR] [--repeats 3] [--busy N]

Problem: 20 Newsgroups "comp.* + sci.* vs the rest" (``load_newsgroups_binary``, all 11,314 training rows),
``--n-labeled`` labeled rows (500, seed 0), alpha = 1e-3, unlabeled_weight = 1, the true
``positive_fraction``; ``TransductiveSVC`` and ``DeterministicAnnealingSVC``, each fit in its own child (wall
and CPU time of ``fit``). Scenarios: ``busy``, with ``--busy`` (default: one per core) Python busy loops
running, and ``idle``, without. In each of ``--repeats`` repeats the three configurations run in a rotated
order; the table gives the median (min-max) and the ratios of the medians to ``n_jobs=1``.
"""

import argparse
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import RESULTS_DIR, ResultsFile, markdown_table, provenance, reductions, run_in_child, timed

ESTIMATORS = {"TSVM": "TransductiveSVC", "DA": "DeterministicAnnealingSVC"}
CONFIGS = [("n_jobs=1", 1, "adaptive"), ("n_jobs=2 before", 2, "fixed"), ("n_jobs=2 after", 2, "adaptive")]
HEADER = ["scenario", "estimator", "configuration", "wall (s)", "CPU (s)", "wall ratio", "CPU ratio", "one/many"]
HEADER.append("coef_")
DEFAULTS = {"estimators": "TSVM,DA", "scenarios": "busy,idle"}


def fit_child(X_path, y_path, estimator, params, mode):
    """Child: one fit under ``THREAD_MODE = mode``, its times, coefficients' hash and schedule counts."""
    import warnings

    import numpy as np
    import scipy.sparse as sp

    import skssl.svm
    from skssl.svm import _kernels, _rowblocks

    X, y_semi = sp.load_npz(X_path).tocsr(), np.load(y_path)
    _rowblocks.THREAD_MODE = mode
    schedules = []

    class Recorded(_kernels.ThreadSchedule):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            schedules.append(self)

    _rowblocks.ThreadSchedule = Recorded
    est = getattr(skssl.svm, estimator)(**params)
    with warnings.catch_warnings(), timed() as t:
        warnings.simplefilter("ignore")
        est.fit(X, y_semi)
    coef = np.ascontiguousarray(est.coef_, dtype=np.float64)
    return {
        "wall": t.wall,
        "cpu": t.cpu,
        "coef_sha": hashlib.sha1(coef.tobytes()).hexdigest()[:12],
        "probes": sum(s.n_probes for s in schedules),
        "switches": sum(s.n_switches for s in schedules),
        "iter_one": sum(s.iterations_one for s in schedules),
        "iter_many": sum(s.iterations_many for s in schedules),
    }


def _fmt(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=None, help="folder holding 20news-bydate.tgz")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="competing busy loops (default: cores)")
    parser.add_argument("--n-labeled", type=int, default=500)
    parser.add_argument("--estimators", default=DEFAULTS["estimators"])
    parser.add_argument("--scenarios", default=DEFAULTS["scenarios"])
    parser.add_argument("--out", default=None, help="default: benchmarks/results/busy_machine.md")
    args = parser.parse_args()

    import numpy as np
    import scipy.sparse as sp

    from skssl.datasets import DatasetUnavailableError, load_newsgroups_binary, newsgroups_labeled_subset

    archive = Path(args.data_dir) / "20news-bydate.tgz" if args.data_dir else None
    try:
        data = load_newsgroups_binary(archive, download_if_missing=False)
    except DatasetUnavailableError as exc:
        print(f"20 Newsgroups unavailable ({exc}); nothing to time.")
        return
    X = data.X_train
    y_semi, r = newsgroups_labeled_subset(data.y_train, args.n_labeled, seed=0)
    params = {"alpha": 1e-3, "unlabeled_weight": 1.0, "positive_fraction": float(r)}
    estimators = [e for e in args.estimators.split(",") if e]
    scenarios = [s for s in args.scenarios.split(",") if s]
    results = {}  # (scenario, estimator, config) -> list of child results
    loads = {}
    with tempfile.TemporaryDirectory() as tmp:
        X_path, y_path = str(Path(tmp) / "X.npz"), str(Path(tmp) / "y.npy")
        sp.save_npz(X_path, X, compressed=False)
        np.save(y_path, y_semi)
        for scenario in scenarios:
            # competing CPU-bound processes: a Python busy loop each
            n_busy = args.busy if scenario == "busy" else 0
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_busy)]
            try:
                time.sleep(1.0 if busy else 0.0)
                loads[scenario] = os.getloadavg()
                for rep in range(args.repeats):
                    order = CONFIGS[rep % len(CONFIGS) :] + CONFIGS[: rep % len(CONFIGS)]
                    for est in estimators:
                        for name, n_jobs, mode in order:
                            res = run_in_child(
                                fit_child, X_path, y_path, ESTIMATORS[est], {**params, "n_jobs": n_jobs}, mode
                            )
                            results.setdefault((scenario, est, name), []).append(res)
                            print(
                                f"{scenario} rep {rep} {est} {name}: wall {res['wall']:.2f} s, cpu {res['cpu']:.2f} s, "
                                f"probes {res['probes']}, iterations one/many {res['iter_one']}/{res['iter_many']}",
                                flush=True,
                            )
            finally:
                for p in busy:
                    p.terminate()
                    p.wait()
    _write(args, results, loads, estimators, scenarios, X)


def _write(args, results, loads, estimators, scenarios, X):
    rows = []
    for scenario in scenarios:
        for est in estimators:
            base = results[(scenario, est, "n_jobs=1")]
            base_wall = statistics.median(r["wall"] for r in base)
            base_cpu = statistics.median(r["cpu"] for r in base)
            ref_sha = results[(scenario, est, "n_jobs=2 before")][0]["coef_sha"]
            for name, _, _ in CONFIGS:
                runs = results[(scenario, est, name)]
                walls, cpus = [r["wall"] for r in runs], [r["cpu"] for r in runs]
                shas = {r["coef_sha"] for r in runs}
                if name == "n_jobs=1":
                    same = "(n_jobs=1)"
                else:
                    same = "same bits as before" if shas == {ref_sha} else "DIFFERENT: " + ",".join(sorted(shas))
                one_many = f"{sum(r['iter_one'] for r in runs)}/{sum(r['iter_many'] for r in runs)}"
                ratios = [f"{statistics.median(walls) / base_wall:.2f}", f"{statistics.median(cpus) / base_cpu:.2f}"]
                rows.append([scenario, est, name, _fmt(walls), _fmt(cpus), *ratios, one_many, same])
    text = (
        "# n_jobs=2 vs n_jobs=1 on a busy machine (`benchmarks/busy_machine.py`)\n\n"
        f"{provenance()} {platform.platform()}.\n\n"
        f"20 Newsgroups binary ({X.shape[0]} x {X.shape[1]}, {X.nnz} non-zeros), "
        f"{args.n_labeled} labeled rows (seed 0), alpha = 1e-3, unlabeled_weight = 1. {args.repeats} repeats, "
        "each fit in its own child process, configurations in a rotated order; median (min-max) of `fit`'s wall "
        'and CPU time (all threads), in seconds. `before`: `THREAD_MODE = "fixed"` (all n_jobs threads always, '
        'the behaviour before the thread schedule); `after`: the default `"adaptive"` schedule. `ratio` = '
        "median of n_jobs=2 / median of n_jobs=1. `one/many`: CGLS iterations run on one thread / on two (summed "
        "over the repeats).\n\n"
        f"busy: {args.busy} competing CPU-bound processes (a Python busy loop each) during the scenario. Load "
        "average (1, 5, 15 min) at the start of each scenario: "
        + "; ".join(f"{s} {tuple(round(v, 2) for v in loads[s])}" for s in scenarios)
        + ". On a machine shared with other jobs the `idle` rows are not idle.\n\n"
        + markdown_table(HEADER, rows)
    )
    reduced = reductions(args, repeats=3, **DEFAULTS)
    ResultsFile(RESULTS_DIR / "busy_machine.md", args.out, reduced=reduced).finish(text)
    print(text)


if __name__ == "__main__":
    main()
