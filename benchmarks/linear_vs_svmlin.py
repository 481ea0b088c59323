"""skssl's linear S3VMs against SVMlin 1.0's reference runs (DESIGN.md section 3).

Run from the repository root with the data directory as argument::

    python benchmarks/linear_vs_svmlin.py ../shared/data

Datasets: pcmac (SVMlin's example split, 50 labeled rows) and 20 Newsgroups
"comp.* + sci.* vs the rest" built with DESIGN's protocol, l in {100, 500},
seeds 0-2, r = the true positive fraction of the unlabeled rows (0.5 on
pcmac as in SVMlin's reference run). Methods: LinearL2SVC, TransductiveSVC
(S = 10000 and S = 1), DeterministicAnnealingSVC, sklearn's LinearSVC (on the
labeled rows) and SelfTrainingClassifier(LogisticRegression(C=10)) (C=10
reproduces DESIGN's 84.0% on 20NG l=500 seed 0; the default C=1 labels every
row negative there, 53.1%). Every model is
a linear function, so ``F`` is SVMlin's ``transductive_cost`` (lam = 1e-3,
lam_u = 1) of each model on the training rows, comparable across methods.

Measured: CPU seconds of ``fit`` (``time.process_time``, one thread), peak
memory of ``fit`` (``tracemalloc``, a second fit, seed-0 rows only, in MB and
as a multiple of the CSR size of X), F, test accuracy and the transductive
accuracy (on the unlabeled training rows; pcmac does not ship their labels).
A scaling run fits TSVM and DA on growing row subsets of 20NG and fits the
slope of log(CPU time) against log(nnz).

The table is printed and written to benchmarks/results/linear_vs_svmlin.md.
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy
import sklearn
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import LinearSVC

from skssl.datasets import load_newsgroups_binary, newsgroups_labeled_subset
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm._objective import transductive_cost

ALPHA, LAM_U = 1e-3, 1.0

# SVMlin 1.0 reference runs from DESIGN.md: (test accuracy %, F, CPU s).
# TSVM S=1 on 20NG seed 0 is derived from DESIGN's "4.8x / 2.6x slower than
# S = 10000" (marked ~ in the table); None = not reported.
SVMLIN = {
    ("pcmac", 50, 0, "LinearL2SVC"): (66.7, None, 0.00),
    ("pcmac", 50, 0, "TSVM S=10000"): (92.8, 0.133878, 0.28),
    ("pcmac", 50, 0, "TSVM S=1"): (92.6, 0.135374, 0.38),
    ("pcmac", 50, 0, "DA"): (94.0, 0.123867, 1.22),
    ("pcmac", 50, 0, "SelfTraining(LogReg)"): (50.6, None, None),
    ("20ng", 100, 0, "LinearL2SVC"): (75.5, None, None),
    ("20ng", 100, 0, "TSVM S=10000"): (78.9, 0.21678, 14.1),
    ("20ng", 100, 0, "TSVM S=1"): (None, None, 14.1 * 4.8),
    ("20ng", 100, 0, "DA"): (77.2, 0.214574, 29.5),
    ("20ng", 500, 0, "LinearL2SVC"): (86.1, None, None),
    ("20ng", 500, 0, "TSVM S=10000"): (88.3, 0.280015, 7.1),
    ("20ng", 500, 0, "TSVM S=1"): (None, None, 7.1 * 2.6),
    ("20ng", 500, 0, "DA"): (88.3, 0.278529, 19.4),
    ("20ng", 500, 1, "LinearL2SVC"): (86.0, None, None),
    ("20ng", 500, 1, "TSVM S=10000"): (86.1, 0.276285, 8.0),
    ("20ng", 500, 1, "DA"): (85.0, 0.27406, 20.9),
    ("20ng", 500, 2, "LinearL2SVC"): (85.8, None, None),
    ("20ng", 500, 2, "TSVM S=10000"): (87.6, 0.278724, 5.5),
    ("20ng", 500, 2, "DA"): (87.3, 0.277241, 16.8),
    ("20ng", 500, 0, "SelfTraining(LogReg)"): (84.0, None, 7.8),
}
DERIVED = {("20ng", 100, 0, "TSVM S=1"), ("20ng", 500, 0, "TSVM S=1")}


def methods(r):
    """Factories: name -> (estimator, uses the unlabeled rows)."""
    return {
        "LinearL2SVC": (LinearL2SVC(alpha=ALPHA), True),
        "TSVM S=10000": (TransductiveSVC(alpha=ALPHA, unlabeled_weight=LAM_U, positive_fraction=r), True),
        "TSVM S=1": (
            TransductiveSVC(alpha=ALPHA, unlabeled_weight=LAM_U, positive_fraction=r, max_switches=1),
            True,
        ),
        "DA": (DeterministicAnnealingSVC(alpha=ALPHA, unlabeled_weight=LAM_U, positive_fraction=r), True),
        "sklearn LinearSVC": (LinearSVC(), False),
        "SelfTraining(LogReg)": (SelfTrainingClassifier(LogisticRegression(C=10.0, max_iter=1000)), True),
    }


def linear_model(est):
    inner = getattr(est, "estimator_", est)
    return np.ravel(inner.coef_), float(np.ravel(inner.intercept_)[0])


def csr_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def fit_once(est, X, y, unlabeled_ok):
    if not unlabeled_ok:
        keep = y != -1
        X, y = X[keep], y[keep]
    start = time.process_time()
    est.fit(X, y)
    return time.process_time() - start


def peak_memory(make, X, y, unlabeled_ok):
    if not unlabeled_ok:
        keep = y != -1
        X, y = X[keep], y[keep]
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    make().fit(X, y)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def evaluate(name, est, data, cpu, peak):
    X, y_semi, y_true, X_test, y_test = data["X"], data["y_semi"], data["y_true"], data["X_test"], data["y_test"]
    w, b = linear_model(est)
    outputs = X @ w + b
    labeled = y_semi != -1
    y_pm = np.where(y_semi == 1, 1.0, -1.0)
    F = transductive_cost(w, b, outputs, y_pm, labeled, ALPHA, LAM_U)
    test_acc = 100 * np.mean(est.predict(X_test) == y_test)
    trans_acc = None
    if y_true is not None:
        unl = ~labeled
        trans_acc = 100 * np.mean(est.predict(X[unl]) == y_true[unl])
    ref = SVMLIN.get((data["name"], data["l"], data["seed"], name), (None, None, None))
    return {
        "dataset": data["name"],
        "l": data["l"],
        "seed": data["seed"],
        "method": name,
        "cpu": cpu,
        "peak_mb": None if peak is None else peak / 2**20,
        "peak_ratio": None if peak is None else peak / csr_bytes(X),
        "F": F,
        "test": test_acc,
        "trans": trans_acc,
        "ref_acc": ref[0],
        "ref_F": ref[1],
        "ref_cpu": ref[2],
        "derived": (data["name"], data["l"], data["seed"], name) in DERIVED,
    }


def run_dataset(data, method_names, measure_memory, log):
    rows = []
    for name in method_names:
        est, unlabeled_ok = methods(data["r"])[name]
        cpu = fit_once(est, data["X"], data["y_semi"], unlabeled_ok)
        peak = None
        if measure_memory and data["seed"] == 0 and name != "TSVM S=1":
            peak = peak_memory(lambda n=name: methods(data["r"])[n][0], data["X"], data["y_semi"], unlabeled_ok)
        row = evaluate(name, est, data, cpu, peak)
        rows.append(row)
        log(format_row(row))
    return rows


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


HEADER = (
    "| data | l | seed | method | CPU s | SVMlin CPU s | CPU ratio | peak MB | peak / X | F | SVMlin F "
    "| F ratio | test acc % | SVMlin acc % | transd. acc % |"
)
RULE = "|" + "---|" * 15


def format_row(r):
    cpu_ratio = r["cpu"] / r["ref_cpu"] if r["ref_cpu"] else None
    F_ratio = r["F"] / r["ref_F"] if r["ref_F"] else None
    ref_cpu = fmt(r["ref_cpu"], ".2f")
    if r["derived"] and r["ref_cpu"] is not None:
        ref_cpu = "~" + ref_cpu
    cells = [
        r["dataset"],
        str(r["l"]),
        str(r["seed"]),
        r["method"],
        fmt(r["cpu"], ".2f"),
        ref_cpu,
        fmt(cpu_ratio, ".2f"),
        fmt(r["peak_mb"], ".1f"),
        fmt(r["peak_ratio"], ".2f"),
        fmt(r["F"], ".6f"),
        fmt(r["ref_F"], ".6f"),
        fmt(F_ratio, ".4f"),
        fmt(r["test"], ".1f"),
        fmt(r["ref_acc"], ".1f"),
        fmt(r["trans"], ".1f"),
    ]
    return "| " + " | ".join(cells) + " |"


def load_pcmac_files(root):
    folder = Path(root) / "pcmac"
    X, y = load_svmlight_file(str(folder / "pcmac_train.svmlight.gz"), n_features=7510)
    X_test, y_test = load_svmlight_file(str(folder / "pcmac_test.svmlight.gz"), n_features=7510)
    y_semi = np.where(y == 0, -1, (y > 0).astype(np.int64))
    return {
        "name": "pcmac",
        "l": int((y_semi != -1).sum()),
        "seed": 0,
        "r": 0.5,
        "X": X.tocsr(),
        "y_semi": y_semi,
        "y_true": None,
        "X_test": X_test.tocsr(),
        "y_test": (y_test > 0).astype(np.int64),
    }


def scaling_run(ng, log, fractions=(0.125, 0.25, 0.5, 1.0)):
    X_all, y_all = ng.X_train, ng.y_train
    rng = np.random.RandomState(0)
    order = rng.permutation(X_all.shape[0])
    rows = []
    for frac in fractions:
        rows_idx = np.sort(order[: round(frac * X_all.shape[0])])
        X, y = X_all[rows_idx], y_all[rows_idx]
        l = max(50, round(500 * frac))
        y_semi, r = newsgroups_labeled_subset(y, l, 0)
        result = {"n": X.shape[0], "nnz": X.nnz, "l": l}
        for name, est in (
            ("TSVM", TransductiveSVC(alpha=ALPHA, positive_fraction=r)),
            ("DA", DeterministicAnnealingSVC(alpha=ALPHA, positive_fraction=r)),
        ):
            result[name] = fit_once(est, X, y_semi, True)
            result[name + "_iter"] = est.n_iter_
        rows.append(result)
        for name in ("TSVM", "DA"):
            result[name + "_per"] = 1000 * result[name] / result[name + "_iter"]
        log(
            f"| {result['n']} | {result['nnz']} | {l} | {result['TSVM']:.2f} | {result['TSVM_iter']} | "
            f"{result['TSVM_per']:.1f} | {result['DA']:.2f} | {result['DA_iter']} | {result['DA_per']:.1f} |"
        )
    nnz = np.log([r["nnz"] for r in rows])
    slopes = {}
    for key in ("TSVM", "DA", "TSVM_per", "DA_per"):
        slopes[key] = float(np.polyfit(nnz, np.log([r[key] for r in rows]), 1)[0])
    return rows, slopes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="directory with pcmac/ and 20news-bydate.tgz (e.g. ../shared/data)")
    parser.add_argument("--quick", action="store_true", help="pcmac and 20NG l=500 seed 0 only, no scaling")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc fits")
    parser.add_argument("--out", default="benchmarks/results/linear_vs_svmlin.md")
    args = parser.parse_args(argv)
    lines = []

    def log(line=""):
        print(line, flush=True)
        lines.append(line)

    log("# skssl linear S3VMs vs SVMlin 1.0")
    log()
    log(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; Python {platform.python_version()}, "
        f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}; "
        f"{os.cpu_count()} CPUs (shared with other jobs), OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}."
    )
    log(
        "SVMlin figures are DESIGN.md's reference runs (same machine class, not the same run): ratios are "
        "indicative. `~` marks SVMlin times derived from DESIGN's S=1 slow-down factors. F = SVMlin's "
        "transductive_cost (lam=1e-3, lam_u=1) of each fitted linear model. Peak memory: tracemalloc "
        "during fit (seed 0 rows), X = CSR bytes of the training matrix."
    )
    log()
    log(HEADER)
    log(RULE)
    all_names = list(methods(0.5))
    rows = run_dataset(load_pcmac_files(args.data), all_names, not args.no_memory, log)
    ng = load_newsgroups_binary(Path(args.data) / "20news-bydate.tgz")
    configs = [(500, 0)] if args.quick else [(100, 0), (100, 1), (100, 2), (500, 0), (500, 1), (500, 2)]
    for l, seed in configs:
        y_semi, r = newsgroups_labeled_subset(ng.y_train, l, seed)
        data = {
            "name": "20ng",
            "l": l,
            "seed": seed,
            "r": r,
            "X": ng.X_train,
            "y_semi": y_semi,
            "y_true": ng.y_train,
            "X_test": ng.X_test,
            "y_test": ng.y_test,
        }
        rows += run_dataset(data, all_names, not args.no_memory, log)
    log()
    log(
        f"20NG training matrix: {ng.X_train.shape[0]} x {ng.X_train.shape[1]}, {ng.X_train.nnz} nnz, "
        f"CSR {csr_bytes(ng.X_train) / 2**20:.1f} MB."
    )
    if not args.quick:
        log()
        log("## Scaling: CPU time of fit against nnz (20NG row subsets, l = 500 x fraction, seed 0)")
        log()
        log(
            "| rows | nnz | l | TSVM CPU s | TSVM MFN solves | TSVM ms / solve | DA CPU s | DA w-solves "
            "| DA ms / solve |"
        )
        log("|---|---|---|---|---|---|---|---|---|")
        _, slopes = scaling_run(ng, log)
        log()
        log(
            f"Fitted log-log slope of CPU time against nnz: TSVM {slopes['TSVM']:.2f}, DA {slopes['DA']:.2f}; "
            f"of the time per l2-SVM-MFN solve: TSVM {slopes['TSVM_per']:.2f}, DA {slopes['DA_per']:.2f}. "
            "(The number of solves depends on the data: DA's annealing path is longer on the small subsets.)"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
