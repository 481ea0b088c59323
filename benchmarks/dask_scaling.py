"""A fit on a Dask cluster against the in-memory fit, and the cost model it gives::

    python benchmarks/dask_scaling.py [--rows 804414] [--workers 2] [--repeats 3] [--methods TSVM DA] [--out FILE]

Problem: the RCV1-shaped problem of ``linear_scaling.make_rcv1_like`` (804,414 rows, 47,236 features, 61.7M nnz
at full size), with the paper-scale parameters (``alpha=1e-3``, ``unlabeled_weight=1``, the true positive
fraction), so that each fit is one semi-supervised solve. Side by side, alternating, ``--repeats`` times:

* **in memory**: ``fit`` on the CSR matrix with ``n_jobs=2`` in a fresh child process with the user's
  environment minus the thread variables (``linear_subprocess.run_skssl``); X is read before the clock starts;
* **on Dask**: a ``LocalCluster`` of ``--workers`` worker processes with one thread each, started once; X is
  written as one ``.npz`` file per worker, read by the workers themselves (``dask.delayed``) and persisted
  before the clock starts. The fit is timed in two parts: the set-up (the blocks checked and summed where they
  lie) and the solve, through the estimator's own Dask path (``_dask_rows.DaskRows`` and ``_dask_fit`` are
  called directly only to read the store's traffic counters: round trips and bytes).

Then the **round-trip latency** of the same cluster: ``--probe-rounds`` rounds of a step that computes nothing,
through the same store (two tasks per block per round, as every solver step). The cost model
``T = rounds x latency + compute`` splits the Dask solve's wall time, and projects it to ``--project-nnz``
non-zeros on ``--project-workers`` workers under the assumptions printed with it.
"""

import argparse
from collections import Counter
import tempfile
import time
from pathlib import Path

import linear_subprocess as lsp
import numpy as np
import scipy.sparse as sp
from _harness import RESULTS_DIR, Lines, ResultsFile, add_allow_dirty, markdown_row, provenance, reductions, table_head
from linear_scaling import RCV1_ROWS, make_rcv1_like

HEADER = ["repeat", "method", "where", "wall s", "set-up s", "solve s", "rounds", "KB out / round"]
HEADER += ["KB back / round", "n_iter_", "objective", "rel. diff. to in memory"]
# Slope of TSVM's n_iter_ against nnz on the RCV1-shaped sizes (benchmarks/results/linear_scaling.md).
N_ITER_SLOPE = 0.19


def _unchanged(block):
    """A step that computes nothing: the latency probe."""
    return block


def save_blocks(X, n_blocks, workdir):
    """Write ``X`` as ``n_blocks`` CSR files of consecutive rows; return their paths and row counts."""
    bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    paths = []
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        path = Path(workdir) / f"block{k}.npz"
        sp.save_npz(path, X[lo:hi], compressed=False)
        paths.append((str(path), int(hi - lo)))
    return paths


def dask_rows_of(paths, n_features, y_semi, client):
    """A Dask array of the saved blocks, read and persisted on the workers, and ``y`` chunked like it."""
    import dask
    import dask.array as da
    from distributed import wait

    meta = sp.csr_matrix((0, n_features))
    parts = [
        da.from_delayed(dask.delayed(sp.load_npz)(path), shape=(n, n_features), dtype=np.float64, meta=meta)
        for path, n in paths
    ]
    X = client.persist(da.concatenate(parts, axis=0))
    wait(X)
    y = da.from_array(y_semi, chunks=(X.chunks[0],))
    return X, y


def fit_on_cluster(estimator, X, y):
    """Fit through the Dask path, timing the set-up and the solve; return the timings and the traffic."""
    from skssl.svm.dask._dask_fit import _fit_rows, _lazy_transduction
    from skssl.svm.dask._dask_rows import DaskRows

    start = time.perf_counter()
    rows = DaskRows(X, y)
    setup = time.perf_counter()
    _fit_rows(estimator, rows)
    estimator.transduction_ = _lazy_transduction(estimator, rows)
    end = time.perf_counter()
    out = dict(setup=setup - start, solve=end - setup, wall=end - start, n_iter=int(np.max(estimator.n_iter_)))
    out.update(rounds=rows.n_rounds, sent=rows.bytes_sent, received=rows.bytes_received)
    return dict(out, objective=float(np.ravel(estimator.objective_)[0]))


def probe_latency(X, y, rounds):
    """Seconds per round trip of a step that computes nothing, through the solvers' store."""
    from skssl.svm.dask._dask_rows import DaskRows

    store = DaskRows(X, y)
    states = store.blocks
    store.round(_unchanged, states)  # warm-up: the function is shipped once
    start = time.perf_counter()
    for _ in range(rounds):
        states, _ = store.round(_unchanged, states)
    return (time.perf_counter() - start) / rounds, len(store.blocks)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=RCV1_ROWS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=list(lsp.ESTIMATORS), choices=list(lsp.ESTIMATORS))
    parser.add_argument("--probe-rounds", type=int, default=300)
    parser.add_argument("--project-nnz", type=float, default=6e9)
    parser.add_argument("--project-workers", type=int, default=32)
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per in-memory fit")
    parser.add_argument("--out", default=None, help="default: benchmarks/results/dask_scaling.md")
    add_allow_dirty(parser)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    import skssl.svm

    reduced = reductions(args, rows=RCV1_ROWS, repeats=3, methods=list(lsp.ESTIMATORS), probe_rounds=300)
    reduced += [f"--workers {args.workers} (full run: 2)"] if args.workers != 2 else []
    results = ResultsFile(RESULTS_DIR / "dask_scaling.md", args.out, reduced=reduced, allow_dirty=args.allow_dirty)
    log = Lines()
    X, y_semi, y = make_rcv1_like(args.rows)
    r = float(y[y_semi == -1].mean())
    nnz, n_features = X.nnz, X.shape[1]
    log("# Linear S3VMs on a Dask cluster against one machine", "", provenance(argv), "")
    log(
        f"RCV1-shaped problem: {X.shape[0]:,} rows, {n_features:,} features, {nnz / 1e6:.1f}M nnz "
        f"({lsp.csr_bytes(X) / 2**20:.0f} MB as CSR), {np.count_nonzero(y_semi != -1):,} labeled rows; "
        f"alpha={lsp.ALPHA}, unlabeled_weight={lsp.LAM_U}, positive_fraction={r:.4f} (the true one). In memory: "
        f"n_jobs=2 in a fresh child process. Dask: LocalCluster, {args.workers} worker processes x 1 thread, "
        f"one row block per worker. Wall-clock seconds of `fit`; runs alternate.",
        "",
        *table_head(HEADER),
    )
    memory, cluster = [], []
    with tempfile.TemporaryDirectory(prefix="skssl-dask-") as workdir:
        problem = lsp.save_problem(Path(workdir) / "p", X, y_semi)
        paths = save_blocks(X, args.workers, workdir)
        del X
        with (
            LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as lc,
            Client(lc) as client,
        ):
            Xd, yd = dask_rows_of(paths, n_features, y_semi, client)
            # Blocks held by each worker (who_has maps each block to the workers that hold it).
            held = Counter(w for workers in client.who_has(Xd).values() for w in workers)
            placement, holders = sorted(held.values()), set(held)
            for repeat in range(1, args.repeats + 1):
                for method in args.methods:
                    name = lsp.ESTIMATORS[method]
                    mem = lsp.run_skssl(problem, name, lsp.params(r, n_jobs=2), threads=0, timeout=args.timeout)
                    memory.append((method, mem))
                    cells = [repeat, method, "in memory", f"{mem['wall']:.1f}", "", "", "", "", ""]
                    log(markdown_row(cells + [mem["n_iter"], f"{mem['objective']:.10f}", ""]))
                    res = fit_on_cluster(getattr(skssl.svm, name)(**lsp.params(r)), Xd, yd)
                    cluster.append((method, res))
                    rel = abs(res["objective"] - mem["objective"]) / abs(mem["objective"])
                    cells = [repeat, method, "Dask", f"{res['wall']:.1f}", f"{res['setup']:.1f}", f"{res['solve']:.1f}"]
                    cells += [res["rounds"], f"{res['sent'] / res['rounds'] / 1e3:.0f}"]
                    cells += [f"{res['received'] / res['rounds'] / 1e3:.0f}", res["n_iter"]]
                    log(markdown_row(cells + [f"{res['objective']:.10f}", f"{rel:.1e}"]))
                    results.save_progress(log.text())
            latency, n_blocks = probe_latency(Xd, yd, args.probe_rounds)
    log("", f"Blocks per worker: {placement} on {len(holders)} worker(s).", "")
    log(*cost_model(args, memory, cluster, latency, n_blocks, nnz, n_features))
    print(log.text())
    results.finish(log.text())


def cost_model(args, memory, cluster, latency, n_blocks, nnz, n_features):
    """The summary lines: ratio to in memory, the solve split into latency and compute, the projection."""
    out = ["## Ratio and cost model", ""]
    for method in args.methods:
        mem = [m["wall"] for k, m in memory if k == method]
        das = [d for k, d in cluster if k == method]
        if not mem or not das:
            continue
        walls = [d["wall"] for d in das]
        ratios = [d / m for d, m in zip(walls, mem)]
        rounds = int(np.median([d["rounds"] for d in das]))
        solve = float(np.median([d["solve"] for d in das]))
        compute = max(solve - rounds * latency, 0.0)
        per_round = compute / rounds
        out.append(
            f"* **{method}**: Dask / in memory (n_jobs=2) wall time, per repeat: "
            f"{', '.join(f'{x:.2f}' for x in ratios)} (median {np.median(ratios):.2f}; target <= 1.5). "
            f"Median Dask wall {np.median(walls):.1f} s (set-up {np.median([d['setup'] for d in das]):.1f} s), "
            f"in memory {np.median(mem):.1f} s. {rounds:,} round trips; at the probe's {latency * 1e3:.1f} ms each "
            f"they account for {rounds * latency:.1f} s of the {solve:.1f} s solve, the rest ({compute:.1f} s, "
            f"{per_round * 1e3:.1f} ms per round) is the workers' compute and the client's own steps."
        )
        big_rounds = rounds * (args.project_nnz / nnz) ** N_ITER_SLOPE
        per_worker_now = nnz / args.workers
        per_worker_big = args.project_nnz / args.project_workers
        big_compute = big_rounds * per_round * per_worker_big / per_worker_now
        # Latency with more blocks: the client serialises one call per block and waits for the slowest; taken
        # as proportional to the blocks here, a pessimistic assumption (the calls are sent concurrently).
        big_latency = latency * args.project_workers / n_blocks
        bytes_round = 2 * 8 * n_features * args.project_workers
        transfer = bytes_round / 1e9  # seconds at 1 GB/s through the client
        total = big_rounds * (big_latency + transfer) + big_compute
        out.append(
            f"  Projection to {args.project_nnz / 1e9:.0f} billion nnz on {args.project_workers} workers "
            f"({per_worker_big / 1e6:.0f}M nnz each, {per_worker_big * 12 / 2**30:.1f} GiB of CSR): "
            f"{big_rounds:,.0f} round trips (n_iter_ ~ nnz^{N_ITER_SLOPE}), compute "
            f"{big_compute / 60:.0f} min, latency {big_rounds * big_latency / 60:.0f} min "
            f"({big_latency * 1e3:.0f} ms per round), client traffic {big_rounds * transfer / 60:.1f} min "
            f"({bytes_round / 1e6:.0f} MB per round at 1 GB/s): about {total / 60:.0f} minutes."
        )
    out += [
        "",
        "Assumptions of the projection: the same 47,236 features (a larger vocabulary adds to the traffic term "
        "linearly); each worker's compute per round proportional to its nnz (the RCV1-shaped runs of "
        "`linear_scaling.md` give CPU per n_iter_ growing as nnz^0.86, so this is pessimistic); round trips growing "
        f"with TSVM's n_iter_ as nnz^{N_ITER_SLOPE} (measured on 1M to 62M nnz, extrapolated 100x); latency per "
        "round proportional to the number of blocks (one call per block and round, and the client waits for all); "
        "feature-length vectors of 8-byte floats, one out and one back per block and round, through a client link "
        "of 1 GB/s; workers with the same per-core speed as this machine's and no other load.",
    ]
    return out


if __name__ == "__main__":
    main()
