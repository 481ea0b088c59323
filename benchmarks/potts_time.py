"""Potts DA's CPU time against one-vs-rest DA's, side by side on an idle machine::

    python benchmarks/potts_time.py [DATA_DIR] --runs 20:1 5:2 [--repeats 3]

``potts_newsgroups.py`` runs six methods one after the other while other jobs may share the machine, so its
time ratios carry the load of the moment. This script fits only ``PottsDeterministicAnnealingSVC`` and
one-vs-rest ``DeterministicAnnealingSVC`` on its problems (all 20 classes, the full training split, ``n``
labels per class, seed ``s`` for ``n:s``, the true class fractions), alternating which goes first, and reports
the minimum CPU seconds of ``fit`` over the repeats (one BLAS thread, ``n_jobs=None``) and their ratio.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _harness import (
    RESULTS_DIR,
    Lines,
    ResultsFile,
    add_allow_dirty,
    markdown_row,
    provenance,
    reductions,
    table_head,
    timed,
)  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from skssl.datasets import DatasetUnavailableError, fetch_20newsgroups_bydate, make_semi_supervised  # noqa: E402
from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC  # noqa: E402

ALPHA, LAM_U = 1e-3, 1.0
DEFAULT_RUNS = ["20:1", "5:2"]
HEADER = ["labels/class", "seed", "Potts DA CPU s", "OvR DA CPU s", "ratio"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", default=None, help="folder holding 20news-bydate.tgz")
    parser.add_argument("--runs", nargs="+", default=DEFAULT_RUNS, help="labels:seed pairs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="default: benchmarks/results/potts_time.md")
    add_allow_dirty(parser)
    args = parser.parse_args()
    results = ResultsFile(
        RESULTS_DIR / "potts_time.md",
        args.out,
        reduced=reductions(args, runs=DEFAULT_RUNS, repeats=3),
        allow_dirty=args.allow_dirty,
    )
    try:
        raw = fetch_20newsgroups_bydate(None if args.data_dir is None else Path(args.data_dir) / "20news-bydate.tgz")
    except DatasetUnavailableError as exc:
        print(f"potts_time: nothing to time: {exc}")
        return
    X = TfidfVectorizer(min_df=2).fit_transform(raw.data_train).tocsr()
    y = raw.target_train
    K = len(raw.target_names)
    log = Lines()
    log("# Potts DA vs one-vs-rest DA: CPU time side by side", "", provenance(), "")
    log(
        f"20 Newsgroups, 20 classes, full training split ({X.shape[0]} rows), one BLAS thread, fits alternating "
        "(the first fit of each repeat switches between the two); the load average is the one before the run.",
        "",
        f"Minimum of {args.repeats} repeat(s) per method.",
        "",
        *table_head(HEADER),
    )
    order = 0
    for spec in args.runs:
        n, seed = (int(v) for v in spec.split(":"))
        y_semi = make_semi_supervised(y, n, per_class=True, random_state=seed)
        unl = y_semi == -1
        r = np.bincount(y[unl], minlength=K) / unl.sum()
        times = {"potts": [], "ovr": []}
        for _ in range(args.repeats):
            names = ["potts", "ovr"] if order % 2 == 0 else ["ovr", "potts"]
            order += 1
            for name in names:
                cls = PottsDeterministicAnnealingSVC if name == "potts" else DeterministicAnnealingSVC
                est = cls(ALPHA, unlabeled_weight=LAM_U, positive_fraction=r)
                with timed() as t:
                    est.fit(X, y_semi)
                times[name].append(t.cpu)
                print(f"{n}:{seed} {name} {t.cpu:.1f}s", flush=True)
        p, o = min(times["potts"]), min(times["ovr"])
        log(markdown_row([n, seed, f"{p:.1f}", f"{o:.1f}", f"{p / o:.2f}"]))
        results.save_progress(log.text())
    results.finish(log.text())


if __name__ == "__main__":
    main()
