"""Docstring text written once and placed into several docstrings.

:func:`insert_blocks` replaces each ``%(name)s`` placeholder line with its
block, indented like it, so the runtime ``__doc__`` is complete.
"""

import textwrap


def insert_blocks(doc, blocks):
    """Return ``doc`` with every ``%(name)s`` line replaced by ``blocks[name]`` (``None`` under ``-OO``)."""
    if doc is None:
        return None
    for name, text in blocks.items():
        key = f"%({name})s"
        while key in doc:
            start = doc.index(key)
            indent = " " * (start - doc.rfind("\n", 0, start) - 1)
            doc = doc[:start] + textwrap.indent(text, indent).lstrip(" ") + doc[start + len(key) :]
    return doc
