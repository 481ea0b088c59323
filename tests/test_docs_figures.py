"""The figures README.md and the docs quote from ``benchmarks/results/`` are the figures those files hold.

The convention (the docs' Benchmarks page, ``docs/benchmarks.rst``): a block of text that quotes measured figures is
preceded by a marker naming where they come from, one or more results files, each optionally with the
section the figures are read from (``<!-- section: NAME -->`` in the file, or the Markdown heading whose
words, lowercased and joined by ``-``, start with NAME)::

    <!-- figures: benchmarks/results/when_to_use.md#pcmac -->          (Markdown)
    .. figures: benchmarks/results/when_to_use.md#pcmac                (reStructuredText, then a blank line)

The block is the paragraph, list item, table or directive that follows the marker. Every percentage with
a decimal (``93.4%``) and every signed gain (``+1.04``, ``-1.8``) in it must appear, with its sign, in one
of the named sections, and the block must name its results file in text a reader sees. In the files of
``COVERED`` every such percentage must sit in a marked block: a figure without its source is linked or
removed. (Whole percentages, ``10%`` of the labels, are mostly settings and are not checked.)
"""

import importlib.util
import re
from pathlib import Path

import pytest

from ._benchmarks import load_benchmark

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
COVERED = [
    "README.md",
    "docs/index.rst",
    "docs/getting_started.rst",
    "docs/user_guide/choosing.rst",
    "docs/user_guide/linear.rst",
    "docs/user_guide/curriculum.rst",
    "docs/user_guide/model_selection.rst",
    "docs/user_guide/parameters.rst",
    "docs/user_guide/persistence.rst",
    "docs/user_guide/probabilities.rst",
]
MARKER = re.compile(r"^\s*(?:<!--|\.\.) figures: (?P<sources>[^>]*?)\s*(?:-->)?\s*$")
PERCENT = re.compile(r"(?<![\w.])\d+\.\d+%")
GAIN = re.compile(r"(?<![\w.+-])[+-]\d+\.\d+(?![\d%])")


def _indent(line):
    return len(line) - len(line.lstrip())


def marked_blocks(path):
    """``(line number, sources, block text)`` for every marker in ``path``."""
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        start, base = j, _indent(lines[j]) if j < len(lines) else 0
        while j < len(lines):
            if not lines[j].strip():
                k = j
                while k < len(lines) and not lines[k].strip():
                    k += 1
                if k == len(lines) or _indent(lines[k]) <= base:
                    break
                j = k
            elif j > start and (MARKER.match(lines[j]) or _indent(lines[j]) < base):
                break  # the next marker, or the end of the list item or directive the block sits in
            j += 1
        out.append((i + 1, m.group("sources").split(), "\n".join(lines[start:j]), range(start, j)))
    return out


def section_text(source):
    """The text of ``benchmarks/results/FILE.md#SECTION`` (the whole file without ``#SECTION``)."""
    name, _, section = source.partition("#")
    path = REPO / name
    assert path.parent == RESULTS and path.is_file(), f"{source}: not a file of benchmarks/results/"
    text = path.read_text()
    if not section:
        return text
    parts = re.split(r"<!-- section: ([\w.-]+) -->", text)
    sections = dict(zip(parts[1::2], parts[2::2]))
    if section in sections:
        return sections[section]
    # else a Markdown heading whose slug starts with SECTION, up to the next heading of its level or above
    headings = list(re.finditer(r"^(#+) (.+)$", text, re.M))
    for i, h in enumerate(headings):
        if re.sub(r"[^a-z0-9]+", "-", h.group(2).lower()).strip("-").startswith(section):
            ends = [g.start() for g in headings[i + 1 :] if len(g.group(1)) <= len(h.group(1))]
            return text[h.start() : ends[0] if ends else len(text)]
    raise AssertionError(f"{source}: no '<!-- section: {section} -->' and no heading '{section}...' in {name}")


def figures(text):
    return PERCENT.findall(text) + GAIN.findall(text)


def found(figure, text):
    number = figure.rstrip("%").lstrip("+-")
    sign = {"+": r"\+", "-": r"[-\u2212]"}.get(figure[0], "")
    return re.search(rf"(?<![\d.]){sign}{re.escape(number)}(?![\d])", text) is not None


def _cases():
    cases = []
    for name in COVERED:
        for line, sources, block, _ in marked_blocks(REPO / name):
            for figure in dict.fromkeys(figures(block)):
                cases.append(pytest.param(name, line, sources, figure, id=f"{name}:{line}:{figure}"))
    return cases


@pytest.mark.parametrize("name, line, sources, figure", _cases())
def test_a_quoted_figure_is_in_the_results_it_names(name, line, sources, figure):
    texts = [section_text(s) for s in sources]
    assert any(found(figure, t) for t in texts), f"{name}:{line}: {figure} is in none of {', '.join(sources)}"


@pytest.mark.parametrize("name", COVERED)
def test_a_marked_block_names_its_results_file_where_a_reader_sees_it(name):
    for line, sources, block, _ in marked_blocks(REPO / name):
        assert block.strip(), f"{name}:{line}: a figures marker with no block after it"
        for source in sources:
            shown = Path(source.partition("#")[0]).name
            assert shown in block, f"{name}:{line}: the block does not name {shown} for its reader"


@pytest.mark.parametrize("name", COVERED)
def test_every_percentage_in_the_docs_is_quoted_with_its_source(name):
    path = REPO / name
    lines = path.read_text().splitlines()
    inside = {i for *_, rows in marked_blocks(path) for i in rows}
    bare = [
        f"{i + 1}: {line.strip()[:100]}" for i, line in enumerate(lines) if i not in inside and PERCENT.search(line)
    ]
    assert not bare, f"{name}: percentages without a figures marker naming their results file:\n" + "\n".join(bare)


@pytest.mark.slow
def test_the_pcmac_defaults_give_the_figures_of_their_results_file():
    """The README's and the guide's first figures: the defaults on pcmac, measured again by the benchmark's
    own protocol (``python benchmarks/when_to_use.py --only pcmac``) and compared with its results file."""
    wtu = load_benchmark("when_to_use")
    data = wtu.load_pcmac()
    defaults = {name: est for name, est in wtu.candidates().items() if name.endswith("SVC()")}
    assert list(defaults) == ["TransductiveSVC()", "DeterministicAnnealingSVC()"]
    rows = wtu.compare("pcmac", defaults, [("", (data.X_train, data.y_train, data.X_test, data.y_test))])
    table = section_text("benchmarks/results/when_to_use.md#pcmac")
    for name, accuracies, _ in rows:
        row = re.search(rf"^\| {re.escape(name)} \| (\d+\.\d)% \|", table, re.M)
        assert row, f"no row {name} in when_to_use.md#pcmac"
        assert f"{100 * accuracies[0]:.1f}" == row.group(1), f"{name}: {accuracies[0]:.1%} against {row.group(1)}%"


def _quickstart():
    spec = importlib.util.spec_from_file_location("_quickstart", REPO / "examples" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quickstart_labels_each_row_with_the_estimator_it_fits():
    """A user who copies a row's label gets the row's model: the skssl S3VMs run with their defaults."""
    quickstart = _quickstart()
    rows = list(quickstart._candidates(deep=False))
    labels = [quickstart._label(estimator, note) for estimator, _, note in rows]
    for (estimator, _, _), label in zip(rows, labels):
        assert label.startswith(" ".join(repr(estimator).split())), label
    assert {"TransductiveSVC()", "DeterministicAnnealingSVC()", "LinearL2SVC() (labeled rows only)"} <= set(labels)
    for estimator, _, _ in rows:
        if type(estimator).__module__.startswith("skssl.svm"):
            assert estimator.get_params() == type(estimator)().get_params(), repr(estimator)
