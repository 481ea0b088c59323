"""Why TSVM's time grows faster than nnz: switching rounds, skssl against SVMlin.

On the RCV1-shaped problems of ``linear_scaling.py`` the time of ``TransductiveSVC`` grows faster than nnz
while one l2-SVM-MFN solve stays proportional to nnz: the number of solves grows. This script fits TSVM
(``-A 2``, alpha = 1e-3, unlabeled_weight = 1, S = 10,000, the true ``positive_fraction``) with skssl and with
SVMlin 1.0 on the first 13,000 / 52,000 / 200,000 rows of one RCV1-shaped stream, and counts for each the
switching rounds (solves after a label switch) and the pairs switched, with CPU time. If the counts agree and
grow alike, the growth belongs to the algorithm, not to this implementation::

    python benchmarks/tsvm_rounds.py [--rows 13000 52000 200000] [--out FILE]
"""

import argparse
import re
import tempfile
from pathlib import Path

import linear_subprocess as lsp
from _harness import RESULTS_DIR, Lines, ResultsFile, markdown_row, provenance, reductions, table_head, timed
from linear_scaling import make_rcv1_like, slope

import skssl.svm._tsvm as tsvm_mod
from skssl.svm import TransductiveSVC

SWITCHES = 10_000
DEFAULT_ROWS = [13_000, 52_000, 200_000]
HEADER = ["rows", "nnz", "skssl rounds", "SVMlin rounds", "skssl pairs", "SVMlin pairs", "skssl n_iter_"]
HEADER += ["skssl CPU s", "SVMlin CPU s"]


def skssl_counts(X, y_semi, r):
    """Fit skssl's TSVM, counting switching rounds and switched pairs by wrapping ``switch_labels``."""
    calls = []
    original = tsvm_mod.switch_labels

    def counting(*args, **kwargs):
        s = original(*args, **kwargs)
        calls.append(s)
        return s

    tsvm_mod.switch_labels = counting
    try:
        est = TransductiveSVC(lsp.ALPHA, unlabeled_weight=lsp.LAM_U, positive_fraction=r, max_switches=SWITCHES)
        with timed() as t:
            est.fit(X, y_semi)
    finally:
        tsvm_mod.switch_labels = original
    rounds = sum(1 for s in calls if s > 0)
    return {"cpu": t.cpu, "rounds": rounds, "switches": int(sum(calls)), "n_iter": est.n_iter_}


def svmlin_counts(binary, X, y_semi, r, workdir):
    """Run SVMlin's TSVM and count the same from what it prints."""
    examples, labels = Path(workdir) / "x.txt", Path(workdir) / "y.txt"
    lsp.write_svmlin_examples(X, examples)
    lsp.write_svmlin_labels(y_semi, labels)
    res = lsp.run_svmlin(binary, examples, labels, workdir, algo=2, r=r, switches=SWITCHES)
    out = res["stdout"]
    switched = [int(s) for s in re.findall(r"switched (\d+) labels", out)]
    total = re.search(r"Total Number of Switches = (\d+)", out)
    return {
        "cpu": res["cpu"],
        "rounds": sum(1 for s in switched if s > 0),
        "switches": int(total.group(1)) if total else None,  # SVMlin's count is of pairs too
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=DEFAULT_ROWS)
    parser.add_argument("--svmlin-src", default=str(lsp.DEFAULT_SVMLIN_SRC))
    parser.add_argument("--out", default=None, help="default: benchmarks/results/tsvm_rounds.md")
    args = parser.parse_args(argv)
    results = ResultsFile(RESULTS_DIR / "tsvm_rounds.md", args.out, reduced=reductions(args, rows=DEFAULT_ROWS))
    sizes = sorted(args.rows)
    X_full, y_semi_full, y_full = make_rcv1_like(sizes[-1])
    rows_out = []
    log = Lines()
    with tempfile.TemporaryDirectory(prefix="skssl-rounds-") as workdir:
        binary, how = lsp.build_svmlin(args.svmlin_src, workdir)
        if binary is None:
            print(f"SVMlin not available ({how}); nothing to compare.")
            return
        log("# TSVM's switching rounds against n: skssl and SVMlin", "", provenance(argv), "")
        log(
            "CPU s: skssl's `fit` (one process, default threads), SVMlin's solver time as it prints it. Rounds: "
            "retrainings after a switch of at least one pair; pairs: pairs of labels swapped in all.",
            "",
            f"SVMlin: {how}.",
            "",
            *table_head(HEADER),
        )
        for rows in sizes:
            X, y_semi, y = X_full[:rows], y_semi_full[:rows], y_full[:rows]
            r = float(y[y_semi == -1].mean())
            mine = skssl_counts(X, y_semi, r)
            theirs = svmlin_counts(binary, X, y_semi, r, workdir)
            rows_out.append((X.nnz, mine, theirs))
            log(
                markdown_row(
                    [rows, X.nnz, mine["rounds"], theirs["rounds"], mine["switches"], theirs["switches"]]
                    + [mine["n_iter"], f"{mine['cpu']:.1f}", f"{theirs['cpu']:.1f}"]
                )
            )
    if len(rows_out) >= 2:
        nnz = [t[0] for t in rows_out]
        log(
            "",
            f"Log-log slopes against nnz: skssl CPU {slope(nnz, [t[1]['cpu'] for t in rows_out]):.2f}, SVMlin CPU "
            f"{slope(nnz, [t[2]['cpu'] for t in rows_out]):.2f}; rounds skssl "
            f"{slope(nnz, [max(t[1]['rounds'], 1) for t in rows_out]):.2f}, SVMlin "
            f"{slope(nnz, [max(t[2]['rounds'], 1) for t in rows_out]):.2f}.",
        )
    results.finish(log.text())


if __name__ == "__main__":
    main()
