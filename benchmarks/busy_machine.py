"""n_jobs=2 against n_jobs=1 on a busy machine and on an idle one, before and after the thread schedule.

A two-thread fit runs its row blocks on OpenMP threads that meet at a
barrier several times per CGLS iteration. When other processes keep every
core busy, one of the two threads is often descheduled while the other spins
at the barrier, and ``n_jobs=2`` was several times slower than ``n_jobs=1``.
Since then a fit's :class:`~skssl.svm._kernels.ThreadSchedule` times CGLS's
iterations on one thread and on two and keeps the faster (see
:mod:`skssl.svm._rowblocks`). This benchmark measures both behaviours:
``before`` is ``THREAD_MODE = "fixed"`` (all ``n_jobs`` threads always, the
code before the schedule), ``after`` the default ``"adaptive"``.

Problem: 20 Newsgroups "comp.* + sci.* vs the rest"
(:func:`skssl.datasets.load_newsgroups_binary`, all 11,314 training rows,
tf-idf), ``--n-labeled`` labeled rows (default 500, seed 0), alpha = 1e-3,
unlabeled_weight = 1, ``positive_fraction`` = the true fraction of the
unlabeled rows; ``TransductiveSVC`` and ``DeterministicAnnealingSVC``. Each
fit runs in its own child process, which reports the wall and CPU time
(``time.process_time``, all threads) of ``fit``. Scenarios: ``busy``, with
``--busy`` (default: one per core) competing CPU-bound processes (a Python
busy loop each, started before the scenario and stopped after it), and
``idle``, without them. In each repeat (``--repeats``, default 3) the three
configurations ``n_jobs=1``, ``n_jobs=2 before`` and ``n_jobs=2 after`` run
in a rotated order. The table gives the median (min-max) over the repeats
and the ratios of the medians of ``n_jobs=2`` to ``n_jobs=1``. One command,
from the repository root::

    python benchmarks/busy_machine.py [DATA_DIR] [--repeats 3] [--busy N]

It writes ``benchmarks/results/busy_machine.md``. The load average printed
with each scenario says how idle "idle" was: on a machine shared with other
jobs the idle rows are not idle.
"""

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from linear_subprocess import git_revision  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "busy_machine.md"
ESTIMATORS = {"TSVM": "TransductiveSVC", "DA": "DeterministicAnnealingSVC"}
CONFIGS = [("n_jobs=1", 1, "adaptive"), ("n_jobs=2 before", 2, "fixed"), ("n_jobs=2 after", 2, "adaptive")]
BUSY_LOOP = "while True:\n    pass\n"


def _child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _worker(spec_path):
    """Child: one fit, printed as one JSON line."""
    import warnings

    import numpy as np
    import scipy.sparse as sp

    import skssl.svm
    from skssl.svm import _kernels, _rowblocks

    spec = json.loads(Path(spec_path).read_text())
    X = sp.load_npz(spec["X"]).tocsr()
    y_semi = np.load(spec["y"])
    _rowblocks.THREAD_MODE = spec["mode"]
    schedules = []
    if _kernels.ThreadSchedule is not None:

        class Recorded(_kernels.ThreadSchedule):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                schedules.append(self)

        _rowblocks.ThreadSchedule = Recorded
    est = getattr(skssl.svm, spec["estimator"])(**spec["params"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu0, wall0 = time.process_time(), time.perf_counter()
        est.fit(X, y_semi)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    coef = np.ascontiguousarray(est.coef_, dtype=np.float64)
    stats = {
        "probes": sum(s.n_probes for s in schedules),
        "switches": sum(s.n_switches for s in schedules),
        "iter_one": sum(s.iterations_one for s in schedules),
        "iter_many": sum(s.iterations_many for s in schedules),
    }
    print(json.dumps({"wall": wall, "cpu": cpu, "coef_sha": hashlib.sha1(coef.tobytes()).hexdigest()[:12], **stats}))


def _run(spec, workdir):
    path = Path(workdir) / "spec.json"
    path.write_text(json.dumps(spec))
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", str(path)], env=_child_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _start_busy(n):
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]


def _stop_busy(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def _fmt(values):
    med = statistics.median(values)
    return f"{med:.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="competing busy loops (default: cores)")
    parser.add_argument("--n-labeled", type=int, default=500)
    parser.add_argument("--estimators", default="TSVM,DA")
    parser.add_argument("--scenarios", default="busy,idle")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()

    import numpy as np
    import scipy.sparse as sp

    sys.path.insert(0, str(ROOT))
    from skssl.datasets import DatasetUnavailableError, load_newsgroups_binary, newsgroups_labeled_subset
    from skssl.svm import _kernels

    if not _kernels.COMPILED:
        sys.exit("The compiled kernels are not built (python setup.py build_ext --inplace): nothing to compare.")
    archive = Path(args.data_dir) / "20news-bydate.tgz"
    try:
        data = load_newsgroups_binary(archive if archive.exists() else None, download_if_missing=False)
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
        sp.save_npz(Path(tmp) / "X.npz", X, compressed=False)
        np.save(Path(tmp) / "y.npy", y_semi)
        for scenario in scenarios:
            busy = _start_busy(args.busy) if scenario == "busy" else []
            try:
                time.sleep(1.0 if busy else 0.0)
                loads[scenario] = os.getloadavg()
                for rep in range(args.repeats):
                    order = CONFIGS[rep % len(CONFIGS) :] + CONFIGS[: rep % len(CONFIGS)]
                    for est in estimators:
                        for name, n_jobs, mode in order:
                            spec = {
                                "X": str(Path(tmp) / "X.npz"),
                                "y": str(Path(tmp) / "y.npy"),
                                "estimator": ESTIMATORS[est],
                                "params": {**params, "n_jobs": n_jobs},
                                "mode": mode,
                            }
                            res = _run(spec, tmp)
                            results.setdefault((scenario, est, name), []).append(res)
                            print(
                                f"{scenario} rep {rep} {est} {name}: wall {res['wall']:.2f} s, cpu {res['cpu']:.2f} s, "
                                f"probes {res['probes']}, iterations one/many {res['iter_one']}/{res['iter_many']}",
                                flush=True,
                            )
            finally:
                _stop_busy(busy)
    _write(args, results, loads, estimators, scenarios, X)


def _write(args, results, loads, estimators, scenarios, X):
    lines = [
        "# n_jobs=2 vs n_jobs=1 on a busy machine (`benchmarks/busy_machine.py`)",
        "",
        f"git {git_revision()}, {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores. 20 Newsgroups binary ({X.shape[0]} x {X.shape[1]}, {X.nnz} non-zeros), "
        f"{args.n_labeled} labeled rows (seed 0), alpha = 1e-3, unlabeled_weight = 1. {args.repeats} repeats, "
        "each fit in its own child process, configurations in a rotated order; median (min-max) of `fit`'s wall "
        'and CPU time (all threads), in seconds. `before`: `THREAD_MODE = "fixed"` (all n_jobs threads always, '
        'the behaviour before the thread schedule); `after`: the default `"adaptive"` schedule. `ratio` = '
        "median of n_jobs=2 / median of n_jobs=1. `one/many`: CGLS iterations run on one thread / on two (summed "
        "over the repeats).",
        "",
        f"busy: {args.busy} competing CPU-bound processes (a Python busy loop each) during the scenario. Load "
        "average (1, 5, 15 min) at the start of each scenario: "
        + "; ".join(f"{s} {tuple(round(v, 2) for v in loads[s])}" for s in scenarios)
        + ". On a machine shared with other jobs the `idle` rows are not idle.",
        "",
        "| scenario | estimator | configuration | wall (s) | CPU (s) | wall ratio | CPU ratio | one/many | coef_ |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for scenario in scenarios:
        for est in estimators:
            base = results[(scenario, est, "n_jobs=1")]
            base_wall = statistics.median(r["wall"] for r in base)
            base_cpu = statistics.median(r["cpu"] for r in base)
            ref_sha = results[(scenario, est, "n_jobs=2 before")][0]["coef_sha"]
            for name, _, _ in CONFIGS:
                runs = results[(scenario, est, name)]
                walls, cpus = [r["wall"] for r in runs], [r["cpu"] for r in runs]
                ratio_w = statistics.median(walls) / base_wall
                ratio_c = statistics.median(cpus) / base_cpu
                shas = {r["coef_sha"] for r in runs}
                if name == "n_jobs=1":
                    same = "(n_jobs=1)"
                else:
                    same = "same bits as before" if shas == {ref_sha} else "DIFFERENT: " + ",".join(sorted(shas))
                one = sum(r["iter_one"] for r in runs)
                many = sum(r["iter_many"] for r in runs)
                lines.append(
                    f"| {scenario} | {est} | {name} | {_fmt(walls)} | {_fmt(cpus)} | {ratio_w:.2f} | {ratio_c:.2f} "
                    f"| {one}/{many} | {same} |"
                )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.path.insert(0, str(ROOT))
        _worker(sys.argv[2])
    else:
        main()
