"""The package's import structure: no import inside a function, no import circle.

An import inside a function hides an arrow from every tool that reads the
imports (and from the reader): the usual reason for one is a circle that it
keeps alive. Only optional third-party packages may be imported late, so that
skssl imports without them; an optional part of skssl itself (the Dask fits,
the deep nets) is loaded by name at the one place that needs it. The layers
themselves are import-linter contracts in ``pyproject.toml`` (``lint-imports``
in ``.ci/run``); the circle check here needs no extra tool.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "skssl"

#: Optional third-party packages, imported where they are needed so that skssl imports without them:
#: the Dask backend, the deep nets' stack, plotting and data frames in helpers, and pytest in
#: skssl.utils.estimator_checks (a test helper).
OPTIONAL_PACKAGES = frozenset(
    {"dask", "distributed", "torch", "skorch", "accelerate", "pandas", "matplotlib", "pytest"}
)


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, path.name == "__init__.py"


def _absolute(module_name, is_package, node):
    """The absolute name that an ``import``/``from ... import`` statement ``node`` reads from."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level == 0:
        return [node.module]
    base = module_name.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return [".".join(base + ([node.module] if node.module else []))]


def _function_imports(tree):
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def test_no_import_inside_a_function_but_optional_third_party_ones():
    found = []
    for name, path, is_package in _modules():
        for node in _function_imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _absolute(name, is_package, node):
                if target.split(".")[0] not in OPTIONAL_PACKAGES:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {target}")
    assert not found, "imports inside functions:\n" + "\n".join(found)


def _imports(tree):
    """Every import statement, at module level or inside a function, but those under ``TYPE_CHECKING``."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in skipped]


def _import_graph():
    modules = {name: (path, is_package) for name, path, is_package in _modules()}
    graph = {}
    for name, (path, is_package) in modules.items():
        targets = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _absolute(name, is_package, node):
                if isinstance(node, ast.ImportFrom):
                    # ``from package import submodule`` reads the submodule.
                    subs = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in modules]
                    if subs and len(subs) == len(node.names):
                        targets.update(subs)
                        continue
                if target in modules:
                    targets.add(target)
        graph[name] = targets - {name}
    return graph


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_the_import_graph_reads_the_package():
    graph = _import_graph()
    assert "skssl.svm._classes" in graph["skssl.svm"]
    assert "skssl.svm._base" in graph["skssl.svm._classes"]


def test_no_import_circle_in_skssl():
    assert _circles(_import_graph()) == []


def test_the_circle_check_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
