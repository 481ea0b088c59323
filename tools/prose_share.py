"""Count code, docstring and comment lines in the ``skssl`` package.

Every line of each ``skssl/**/*.py`` and ``skssl/**/*.pyx`` file falls in one
of four classes: docstring (part of a statement that is only a string
literal), comment (nothing but a comment), blank, or code (anything else,
including code lines that end in a comment). The script prints one row per
module, sorted by prose share, and the totals; ``--check`` exits with status
1 when a module docstring is longer than ``--max-module-doc`` lines or the
prose share (docstrings plus comments over all lines) exceeds ``--max-share``.

Run it from the repository root::

    python tools/prose_share.py [--check]
"""

import argparse
import io
import sys
import tokenize
from pathlib import Path

SKIP = {
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.COMMENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def classify(text):
    """Return ``(kinds, module_doc_lines)`` for the source ``text``.

    ``kinds`` maps each 1-based line number to ``"doc"``, ``"comment"``,
    ``"blank"`` or ``"code"``.
    """
    lines = text.splitlines()
    kinds = {}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            kinds[number] = "blank"
        elif stripped.startswith("#"):
            kinds[number] = "comment"
        else:
            kinds[number] = "code"
    module_doc = 0
    statement = []
    first_statement = True
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for token in tokens:
        if token.type in SKIP and token.type != tokenize.NEWLINE:
            continue
        if token.type != tokenize.NEWLINE:
            statement.append(token)
            continue
        if statement and all(tok.type == tokenize.STRING for tok in statement):
            start, end = statement[0].start[0], statement[-1].end[0]
            for number in range(start, end + 1):
                kinds[number] = "doc"
            if first_statement:
                module_doc = end - start + 1
        if statement:
            first_statement = False
        statement = []
    return kinds, module_doc


def count(root):
    """Yield one row of counts per module under ``root``."""
    paths = sorted(root.rglob("*.py")) + sorted(root.rglob("*.pyx"))
    for path in paths:
        kinds, module_doc = classify(path.read_text(encoding="utf-8"))
        row = {"path": str(path), "module_doc": module_doc, "lines": len(kinds)}
        for kind in ("code", "doc", "comment", "blank"):
            row[kind] = sum(1 for value in kinds.values() if value == kind)
        yield row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="skssl")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--max-module-doc", type=int, default=25)
    parser.add_argument("--max-share", type=float, default=0.35)
    parser.add_argument("--top", type=int, default=None, help="rows to print")
    args = parser.parse_args(argv)

    rows = list(count(Path(args.root)))
    for row in rows:
        row["share"] = (row["doc"] + row["comment"]) / max(row["lines"], 1)
    rows.sort(key=lambda row: row["share"], reverse=True)
    header = f"{'module':48} {'lines':>6} {'code':>6} {'doc':>6} {'comm':>6}"
    print(header + f" {'moddoc':>6} {'prose':>6}")
    for row in rows[: args.top]:
        print(
            f"{row['path']:48} {row['lines']:6d} {row['code']:6d} "
            f"{row['doc']:6d} {row['comment']:6d} {row['module_doc']:6d} "
            f"{row['share']:6.1%}"
        )
    total = {key: sum(row[key] for row in rows) for key in ("lines", "code", "doc", "comment", "blank")}
    share = (total["doc"] + total["comment"]) / total["lines"]
    nonblank = total["lines"] - total["blank"]
    share_nonblank = (total["doc"] + total["comment"]) / nonblank
    longest = max(rows, key=lambda row: row["module_doc"])
    print(
        f"\ntotal: {len(rows)} modules, {total['lines']} lines, "
        f"{total['code']} code, {total['doc']} docstring, "
        f"{total['comment']} comment, {total['blank']} blank"
    )
    print(f"prose share: {share:.1%} of all lines, {share_nonblank:.1%} of non-blank lines")
    print(f"longest module docstring: {longest['module_doc']} lines ({longest['path']})")
    if not args.check:
        return 0
    too_long = [row for row in rows if row["module_doc"] > args.max_module_doc]
    for row in too_long:
        print(f"module docstring too long: {row['path']} ({row['module_doc']})")
    if share > args.max_share:
        print(f"prose share {share:.1%} is above {args.max_share:.0%}")
    return int(bool(too_long) or share > args.max_share)


if __name__ == "__main__":
    sys.exit(main())
