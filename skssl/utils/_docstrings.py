"""Docstring text written once and placed into several docstrings.

Where estimators document the same parameter or attribute, the text is kept
in one block and each docstring names it with a placeholder ``%(name)s`` on
a line of its own; :func:`insert_blocks` puts the block there, indented like
the placeholder, so the runtime ``__doc__`` (what ``help``, numpydoc and
sphinx autodoc read) is complete.
"""

import textwrap


def insert_blocks(doc, blocks):
    """Return ``doc`` with every ``%(name)s`` replaced by ``blocks[name]``.

    Parameters
    ----------
    doc : str or None
        A docstring whose placeholders each stand alone on a line; ``None``
        (docstrings stripped by ``python -OO``) is returned as it is.
    blocks : dict of str to str
        The text of each placeholder, written at column 0; its lines are
        indented to the placeholder's column.

    Returns
    -------
    doc : str or None
        The docstring with the blocks in place.
    """
    if doc is None:
        return None
    for name, text in blocks.items():
        key = f"%({name})s"
        while key in doc:
            start = doc.index(key)
            indent = " " * (start - doc.rfind("\n", 0, start) - 1)
            doc = doc[:start] + textwrap.indent(text, indent).lstrip(" ") + doc[start + len(key) :]
    return doc
