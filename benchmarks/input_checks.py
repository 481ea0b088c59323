"""What checking a sparse matrix's structure costs, against the fit it protects.

Every entry point passes sparse ``X`` through :func:`skssl.utils.validation.check_sparse_structure`. This
script times that check (minimum of ``--repeats`` calls) and one ``TransductiveSVC()`` fit (which includes it)
on 20 Newsgroups comp.* + sci.* vs the rest (tf-idf, 100 labeled rows) and on the RCV1-shaped problem of
``linear_scaling.py`` (``--rows`` rows, 804,414 by default). Goal: the check costs at most 2% of a fit::

    python benchmarks/input_checks.py
"""

import argparse

from _harness import RESULTS_DIR, ResultsFile, markdown_table, provenance, reductions, timed
from linear_scaling import RCV1_ROWS, make_rcv1_like

from skssl.datasets import DatasetUnavailableError, load_newsgroups_binary, newsgroups_labeled_subset
from skssl.svm import TransductiveSVC
from skssl.utils.validation import check_sparse_structure

HEADER = ["problem", "rows", "nnz", "check ms", "fit wall s", "fit CPU s", "check / fit"]


def measure(name, X, y_semi, repeats):
    """The row of one problem: the check's best time, one fit's wall and CPU time, their ratio."""
    checks = []
    for _ in range(repeats):
        with timed() as t:
            check_sparse_structure(X)
        checks.append(t.wall)
    with timed() as fit:
        TransductiveSVC().fit(X, y_semi)
    check = min(checks)
    row = [name, f"{X.shape[0]:,}", f"{X.nnz / 1e6:.1f}M", f"{check * 1e3:.2f}", f"{fit.wall:.2f}", f"{fit.cpu:.2f}"]
    row.append(f"{100 * check / fit.wall:.3f}%")
    print(row, flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=RCV1_ROWS, help="rows of the RCV1-shaped problem (0: none)")
    parser.add_argument("--repeats", type=int, default=5, help="timings of the check (the minimum is reported)")
    parser.add_argument("--out", default=None, help="the results file (default benchmarks/results/input_checks.md)")
    args = parser.parse_args(argv)
    reduced = reductions(args, repeats=5) + ([f"--rows {args.rows} (full run: {RCV1_ROWS})"] * (args.rows != RCV1_ROWS))
    results = ResultsFile(RESULTS_DIR / "input_checks.md", args.out, reduced=reduced)
    header = provenance(argv)  # its load average is the one at the start
    rows = []
    try:
        data = load_newsgroups_binary(download_if_missing=False)
        y_semi, _ = newsgroups_labeled_subset(data.y_train, 100, 0)
        rows.append(measure("20 Newsgroups (100 labels)", data.X_train, y_semi, args.repeats))
    except DatasetUnavailableError as exc:
        results.degrade(f"20 Newsgroups unavailable ({exc})")
    if args.rows:
        X, y_semi, _ = make_rcv1_like(args.rows)
        rows.append(measure("RCV1-shaped (1% labels)", X, y_semi, args.repeats))
    text = (
        f"# The sparse structure check against a fit\n\n{header}\n\n"
        "One run (other jobs inflate the wall times, not the check's share); check: minimum of "
        f"{args.repeats} calls of `check_sparse_structure`; fit: one `TransductiveSVC()` fit (defaults, "
        "`n_jobs=None`), which includes one check. Goal: check <= 2% of the fit.\n\n" + markdown_table(HEADER, rows)
    )
    results.finish(text)


if __name__ == "__main__":
    main()
