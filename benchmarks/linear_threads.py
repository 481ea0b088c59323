"""Default BLAS/OpenMP threads against one thread for TransductiveSVC and DeterministicAnnealingSVC.

Issue 9 asks that a fit in the environment a user has (no thread variable set) take no more CPU than with
``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1``, within 10%, on a corpus the solvers were not tuned on::

    python benchmarks/linear_threads.py [--corpus reuters] [--repeats 3]

Corpus: the SMS Spam Collection (``sms.tsv``, 5,574 messages, 747 spam) or Reuters-21578
(``reuters21578.tgz``: every article with a body, class 1 = topic "earn"); ``TfidfVectorizer(min_df=2)`` on
all documents, 300 labeled rows drawn with ``np.random.RandomState(0)`` (both classes present),
``positive_fraction`` = the true fraction of the unlabeled rows, alpha = 1e-3, unlabeled_weight = 1. Each fit
runs in its own child (``linear_subprocess.run_skssl``), with the user's environment minus every thread
variable or with all of them set to 1, alternately, ``--repeats`` times; the table gives the minimum CPU (all
threads) and wall time of ``fit`` and the objective. Writes ``results/linear_threads.md``
(``linear_threads_reuters.md`` for Reuters).
"""

import argparse
import tempfile
from pathlib import Path

import linear_subprocess as lsp
import numpy as np
from _harness import RESULTS_DIR, Lines, ResultsFile, markdown_row, provenance, reductions, table_head
from _user_data import load_reuters_earn, load_sms
from sklearn.feature_extraction.text import TfidfVectorizer

from skssl.datasets import DatasetUnavailableError

N_LABELED = 300
HEADER = ["method", "default CPU s", "default wall s", "1 thread CPU s", "1 thread wall s", "CPU ratio"]
HEADER += ["wall ratio", "F default", "F 1 thread", "goal (CPU ratio <= 1.10)"]


def labeled_subset(y, n_labeled, seed=0):
    rng = np.random.RandomState(seed)
    while True:
        idx = np.sort(rng.choice(y.size, n_labeled, replace=False))
        if np.unique(y[idx]).size == 2:
            break
    y_semi = np.full(y.size, -1)
    y_semi[idx] = y[idx]
    r = float(y[y_semi == -1].mean())
    return y_semi, r


def thread_pools():
    try:
        from threadpoolctl import threadpool_info

        return ", ".join(f"{p['internal_api']} {p['num_threads']} threads" for p in threadpool_info())
    except Exception:  # noqa: BLE001 - informational only
        return "?"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=["sms", "reuters"], default="sms")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="default: results/linear_threads[_reuters].md")
    args = parser.parse_args(argv)
    try:
        if args.corpus == "sms":
            sms = load_sms()
            X, y = TfidfVectorizer(min_df=2).fit_transform(sms.X).tocsr(), sms.y
            corpus = "SMS Spam Collection (class 1 = spam)"
        else:
            X, y = load_reuters_earn()
            corpus = "Reuters-21578, every article with a body (class 1 = topic earn)"
    except DatasetUnavailableError as exc:
        print(f"linear_threads: {exc}")
        return
    y_semi, r = labeled_subset(y, N_LABELED)
    log = Lines()
    log("# Default threads vs one thread (linear S3VMs)", "", provenance(argv), "")
    log(f"BLAS/OpenMP pools of the parent process: {thread_pools()}.", "")
    log(
        f"{corpus}, tf-idf (min_df=2): {X.shape[0]} x {X.shape[1]}, {X.nnz} nnz; {N_LABELED} labeled "
        f"(seed 0), positive_fraction = {r:.4f} (true fraction of the unlabeled rows); alpha = {lsp.ALPHA}, "
        f"unlabeled_weight = {lsp.LAM_U}. Minimum of {args.repeats} alternating repeats, each fit in its own child "
        "process. Goal: default CPU within 10% of one-thread CPU.",
        "",
        *table_head(HEADER),
    )
    with tempfile.TemporaryDirectory(prefix="skssl-threads-") as workdir:
        problem = lsp.save_problem(Path(workdir) / "sms", X, y_semi)
        for method, estimator in lsp.ESTIMATORS.items():
            params = lsp.params(r)
            runs = {0: [], 1: []}  # 0: no thread variable (the user's default threads)
            for _ in range(args.repeats):
                for threads in (0, 1):
                    runs[threads].append(lsp.run_skssl(problem, estimator, params, threads=threads))
            F = {threads: lsp.objective(X, y_semi, rs[0]["w"], rs[0]["b"]) for threads, rs in runs.items()}
            cpu = {t: min(x["cpu"] for x in rs) for t, rs in runs.items()}
            wall = {t: min(x["wall"] for x in rs) for t, rs in runs.items()}
            ratio = cpu[0] / cpu[1]
            cells = [method, f"{cpu[0]:.2f}", f"{wall[0]:.2f}", f"{cpu[1]:.2f}", f"{wall[1]:.2f}", f"{ratio:.2f}"]
            cells += [f"{wall[0] / wall[1]:.2f}", f"{F[0]:.6f}", f"{F[1]:.6f}", "met" if ratio <= 1.10 else "NOT met"]
            log(markdown_row(cells))
    suffix = "" if args.corpus == "sms" else f"_{args.corpus}"
    ResultsFile(RESULTS_DIR / f"linear_threads{suffix}.md", args.out, reduced=reductions(args, repeats=3)).finish(
        log.text()
    )


if __name__ == "__main__":
    main()
