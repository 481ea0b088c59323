"""The shared docstring blocks (:mod:`skssl.utils._docstrings`) and their users."""

import subprocess
import sys
import textwrap

from skssl.utils._docstrings import insert_blocks


def test_a_block_takes_the_indentation_of_its_placeholder():
    doc = textwrap.dedent(
        """\
        Summary.

            %(entry)s
                %(entry)s
        """
    )
    block = "name : int\n    What it is.\n\n    More."
    assert insert_blocks(doc, {"entry": block}) == textwrap.dedent(
        """\
        Summary.

            name : int
                What it is.

                More.
                name : int
                    What it is.

                    More.
        """
    )


def test_stripped_docstrings_stay_stripped():
    assert insert_blocks(None, {"entry": "text"}) is None


def test_the_estimators_import_without_docstrings():
    """``python -OO`` strips every docstring: the decorators that fill them must let the modules import."""
    code = (
        "import skssl, skssl.svm, skssl.self_training, skssl.datasets, skssl.model_selection; "
        "assert skssl.svm.TransductiveSVC.__doc__ is None"
    )
    subprocess.run([sys.executable, "-OO", "-c", code], check=True)
