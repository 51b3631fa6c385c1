"""The package's shape (issue 27, docs/architecture.md): no import circle (function-level imports counted), no
import from a lower layer to a higher one, and no module over 600 lines but the named ones."""

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

#: Layers, lowest first: a module may import its own layer and lower ones only.
LAYERS = [
    ("dpglass.exceptions", "dpglass._parsing", "dpglass._validation"),
    ("dpglass.privacy",),
    ("dpglass.schema", "dpglass.aggregates", "dpglass.datasets"),
    ("dpglass.models", "dpglass.local", "dpglass.registry"),
    ("dpglass.audit", "dpglass.export", "dpglass.cli"),
    ("dpglass_experiments",),
]
#: Modules over 600 lines, and why they are still whole (the list may only shrink).
LONG_MODULES = {
    "dpglass.privacy.samplers": "the exact samplers and their proofs' helpers, one family",
    "dpglass.datasets._loaders": "one loader per dataset of the papers",
}


def _modules():
    mods = {}
    for path in SRC.rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _graph(mods):
    def resolve(name):
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            edges |= {t for t in map(resolve, targets) if t and t != name}
        graph[name] = edges
    return graph


def _cycles(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


@pytest.fixture(scope="module")
def graph():
    return _graph(_modules())


def test_no_import_circle(graph):
    assert _cycles(graph) == []


def _layer(name):
    for i, prefixes in enumerate(LAYERS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return i
    return None


def test_no_import_from_a_lower_layer_to_a_higher_one(graph):
    upward = sorted((a, b) for a, edges in graph.items() for b in edges
                    if _layer(a) is not None and _layer(b) is not None and _layer(b) > _layer(a))
    assert upward == [], upward


def test_every_module_has_a_layer():
    """A new package is placed in LAYERS (else its imports go unchecked); only the package root is outside."""
    unplaced = sorted(name for name in _modules() if name != "dpglass" and _layer(name) is None)
    assert unplaced == [], f"add these to LAYERS in tests/test_architecture.py: {unplaced}"


def test_no_module_over_600_lines_but_the_named_ones():
    long = {name for name, path in _modules().items() if len(path.read_text().splitlines()) > 600}
    assert long == set(LONG_MODULES), long
