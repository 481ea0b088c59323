"""Compare two logs of ``benchmarks/user_value.py`` cell by cell: the accuracy of each (data set, draw, method).

    python tools/compare_user_value_logs.py OLD.jsonl NEW.jsonl

Prints the cells both logs hold, how many have the same accuracy to the last digit, and each that differs; exits
1 when any differs. A rerun of a benchmark after a change that should leave every model alone is checked so.
"""

import json
import sys


def cells(path):
    with open(path) as log:
        records = [json.loads(line) for line in log if line.strip()]
    return {(r["dataset"], r["draw"], r["method"]): r.get("accuracy") for r in records if r["status"] == "ok"}


def main(argv=None):
    old_path, new_path = (argv or sys.argv[1:])[:2]
    old, new = cells(old_path), cells(new_path)
    shared = sorted(old.keys() & new.keys())
    differ = [(key, old[key], new[key]) for key in shared if old[key] != new[key]]
    print(f"{len(shared)} cells in both logs, {len(shared) - len(differ)} the same, {len(differ)} differ")
    for (dataset, draw, method), before, after in differ:
        print(f"  {dataset} draw {draw} {method}: {before:.4f} -> {after:.4f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
