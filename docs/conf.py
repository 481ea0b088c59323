"""Sphinx configuration of the skssl documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (runs the
gallery). Fast variant without running the examples:
``python -m sphinx -W -b html -D plot_gallery=0 docs docs/_build/html``.

Dependencies: the ``docs`` extra is enough to build. The complete build (the
deep estimators' API pages and their gallery examples run) also needs the
``deep`` extra. Decision: without torch or skorch, the build does not fail;
autodoc imports :mod:`skssl.deep` against mocked torch/skorch (its API pages
keep their docstrings) and the examples that use :mod:`skssl.deep` are shown
but not run, and one line says so.
"""

import importlib
import os
import re
import sys
from pathlib import Path

import skssl

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "sphinxext"))

project = "skssl"
author = "The skssl developers"
copyright = "2026, The skssl developers"
release = skssl.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "benchmark_tables",
]

source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

intersphinx_mapping = {}  # no network on the build machines: keep links local

html_theme = "pydata_sphinx_theme"
html_title = f"skssl {release}"
html_static_path = []
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}


def _missing(name):
    try:
        importlib.import_module(name)
    except ImportError:
        return True
    return False


_MISSING_DEEP = [name for name in ("torch", "skorch") if _missing(name)]
_RUN_PATTERN = r"/plot_"
if _MISSING_DEEP:
    autodoc_mock_imports = ["torch", "skorch"]
    _deep_examples = sorted(
        path.stem for path in (ROOT / "examples").glob("plot_*.py") if "skssl.deep" in path.read_text()
    )
    if _deep_examples:
        _RUN_PATTERN = r"/plot_(?!(" + "|".join(re.escape(name[len("plot_") :]) for name in _deep_examples) + r")\.py)"
    print(
        f"skssl docs: {' and '.join(_MISSING_DEEP)} not installed: skssl.deep is documented against mocks and "
        f"these examples are shown without being run: {', '.join(_deep_examples) or 'none'} "
        "(install the deep extra for the complete build)."
    )

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": _RUN_PATTERN,
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "run_stale_examples": False,
    "abort_on_example_error": True,
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("skssl",),
}

os.environ.setdefault("OMP_NUM_THREADS", "2")

# The benchmark pages come from the scripts' markdown output, whose headings
# start at level 3 to sit under this page's sections.
suppress_warnings = ["myst.header"]


def _skip_metadata_request_setters(app, what, name, obj, skip, options):
    """sklearn generates ``set_*_request`` methods on every estimator class;
    their docstrings point into sklearn's own docs, so they are left out."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_request_setters)
