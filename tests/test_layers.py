"""The import graph of ``src/toolwire`` follows the layers in ``docs/architecture.md``.

The graph is read from the AST: module-level, function-local and ``TYPE_CHECKING``
imports all count, since each one ties two modules together for a reader. Two rules:
no import goes up the layer order (or outside an "imports only" list), and no two
modules import each other, directly or around a circle.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOC = ROOT / "docs" / "architecture.md"
DATA = ("toolwire.samples.demo_project",)
"""Python files that are package data, not toolwire modules."""


@dataclass(frozen=True)
class Layer:
    rank: int
    package: str
    only: tuple[str, ...]


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def read_layers(text: str) -> list[Layer]:
    """The rows of the layer table: ``| rank | `package` | owns | imports only |``."""
    layers = []
    for row in re.findall(r"^\| (\d+) \| `([\w.]+)` \|[^|]*\|([^|]*)\|$", text, re.M):
        rank, package, only = row
        layers.append(Layer(int(rank), package, tuple(re.findall(r"`([\w.]+)`", only))))
    return layers


def modules() -> dict[str, Path]:
    """Every toolwire module by dotted name, package data left out."""
    found = {}
    for path in sorted((SRC / "toolwire").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if not name.startswith(DATA):
            found[name] = path
    return found


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node: ast.stmt, package: str, known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            yield sub if sub in known else base


def edges(known: dict[str, Path]) -> list[Edge]:
    """Every import of one toolwire module by another, wherever it is written."""
    found = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, _package(name, path), known):
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
                if target in known and target != name:
                    found.append(Edge(name, target, path, node.lineno))
    return list(dict.fromkeys(found))


def layer_of(module: str, layers: list[Layer]) -> Layer | None:
    """The row owning ``module``: the longest package prefix (the root matches only itself)."""
    best = None
    for layer in layers:
        exact = module == layer.package
        inside = layer.package != "toolwire" and module.startswith(layer.package + ".")
        if (exact or inside) and (best is None or len(layer.package) > len(best.package)):
            best = layer
    return best


def upward(all_edges: list[Edge], layers: list[Layer]) -> dict[str, list[Edge]]:
    """Imports that go up the order or outside an "imports only" list, by violation key."""
    found: dict[str, list[Edge]] = {}
    for edge in all_edges:
        source, target = layer_of(edge.source, layers), layer_of(edge.target, layers)
        assert source is not None, f"{edge.source} has no row in {DOC.name}"
        assert target is not None, f"{edge.target} has no row in {DOC.name}"
        if source.package == target.package:
            continue
        if source.only:
            bad = not any(layer_of(edge.target, [Layer(0, p, ())]) for p in source.only)
        else:
            bad = target.rank > source.rank
        if bad:
            found.setdefault(f"up: {edge.source} -> {edge.target}", []).append(edge)
    return found


def cycles(all_edges: list[Edge]) -> dict[str, list[Edge]]:
    """Each circle of imports (a strongly connected set of two or more modules) and its edges."""
    graph: dict[str, set[str]] = {}
    for edge in all_edges:
        graph.setdefault(edge.source, set()).add(edge.target)
    found: dict[str, list[Edge]] = {}
    for group in _components(graph):
        if len(group) > 1:
            inside = [e for e in all_edges if e.source in group and e.target in group]
            found[f"cycle: {', '.join(sorted(group))}"] = _circle(min(group), inside)
    return found


def _circle(start: str, inside: list[Edge]) -> list[Edge]:
    """One shortest way around: the imports that lead from ``start`` back to it."""
    came: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        step = []
        for node in frontier:
            for edge in (e for e in inside if e.source == node and e.target not in came):
                came[edge.target] = edge
                step.append(edge.target)
        if start in came:
            break
        frontier = step
    path = [came[start]]
    while path[-1].source != start:
        path.append(came[path[-1].source])
    return path[::-1]


def _components(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    groups.append(group)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return groups


AGENT = "toolwire.agent"


def read_parts(text: str) -> list[Layer]:
    """The rows of the agent's own table: ``| order | `toolwire.agent...` | owns |``."""
    rows = re.findall(rf"^\| (\d+) \| `({re.escape(AGENT)}[\w.]*)` \|[^|]*\|$", text, re.M)
    return [Layer(int(order), package, ()) for order, package in rows]


def inward(all_edges: list[Edge], parts: list[Layer]) -> dict[str, list[Edge]]:
    """Imports between two parts of the agent that go up the agent's own order."""
    found: dict[str, list[Edge]] = {}
    for edge in all_edges:
        if not (edge.source.startswith(AGENT) and edge.target.startswith(AGENT)):
            continue
        source, target = layer_of(edge.source, parts), layer_of(edge.target, parts)
        assert source is not None, f"{edge.source} has no row in the agent's table"
        assert target is not None, f"{edge.target} has no row in the agent's table"
        if target.rank > source.rank:
            found.setdefault(f"up in the agent: {edge.source} -> {edge.target}", []).append(edge)
    return found


def violations() -> dict[str, list[Edge]]:
    text = DOC.read_text(encoding="utf-8")
    all_edges = edges(modules())
    return {
        **upward(all_edges, read_layers(text)),
        **inward(all_edges, read_parts(text)),
        **cycles(all_edges),
    }


def _describe(found: dict[str, list[Edge]], keys: set[str]) -> str:
    lines = []
    for key in sorted(keys):
        lines.append(key)
        lines += [f"    {e.where()}: {e.source} imports {e.target}" for e in found[key]]
    return "\n".join(lines)


def test_the_layer_table_is_read_from_the_doc() -> None:
    layers = read_layers(DOC.read_text(encoding="utf-8"))
    ranks = [layer.rank for layer in layers]
    assert ranks == sorted(ranks)
    assert {layer.package for layer in layers} >= {
        "toolwire.errors",
        "toolwire.decode",
        "toolwire.updates",
        "toolwire.agent",
        "toolwire.cli",
    }
    facade = next(layer for layer in layers if layer.package == "toolwire.acp")
    assert facade.only == ("toolwire.updates", "toolwire.testing")


def test_every_module_has_a_layer_and_every_layer_exists() -> None:
    layers = read_layers(DOC.read_text(encoding="utf-8"))
    known = modules()
    assert not [m for m in known if layer_of(m, layers) is None]
    assert not [layer.package for layer in layers if layer.package not in known]


def test_every_part_of_the_agent_has_a_row_in_its_table() -> None:
    parts = read_parts(DOC.read_text(encoding="utf-8"))
    known = modules()
    assert [p.package for p in parts if p.package != AGENT] == [
        "toolwire.agent.protocol",
        "toolwire.agent.store",
        "toolwire.agent.session",
        "toolwire.agent.features",
        "toolwire.agent.turn",
    ]
    assert max(parts, key=lambda p: p.rank).package == AGENT  # the top sits above all
    assert not [p.package for p in parts if p.package not in known]
    # Every subpackage of the agent is a row: a new one cannot slip in at the top's rank.
    subpackages = {m for m, path in known.items() if m.startswith(AGENT + ".")}
    subpackages = {m for m in subpackages if known[m].name == "__init__.py"}
    assert subpackages <= {p.package for p in parts}


def test_an_upward_import_inside_the_agent_is_found() -> None:
    parts = read_parts(DOC.read_text(encoding="utf-8"))
    path = SRC / "toolwire" / "agent" / "store" / "database.py"
    edge = Edge("toolwire.agent.store.database", "toolwire.agent.turn.loop", path, 1)
    assert list(inward([edge], parts)) == [
        "up in the agent: toolwire.agent.store.database -> toolwire.agent.turn.loop"
    ]
    assert not inward([Edge(edge.target, edge.source, path, 1)], parts)


def test_the_graph_sees_local_and_type_checking_imports() -> None:
    sources = {(e.source, e.target) for e in edges(modules())}
    # cli/_acp_run imports the agent's launcher inside the function that serves acp.
    assert ("toolwire.cli._acp_run", "toolwire.agent.launch") in sources


def test_no_import_goes_up_the_layers_and_none_goes_around_a_circle() -> None:
    found = violations()
    assert not found, "imports against docs/architecture.md:\n" + _describe(found, set(found))


PURE = (
    "toolwire.errors",
    "toolwire.events",
    "toolwire.sse",
    "toolwire.jsonstream",
    "toolwire.decode",
    "toolwire.history",
    "toolwire.updates",
)
"""Sans-IO packages: the standard library only, and not asyncio (docs/architecture.md)."""


def _top_names(node: ast.AST) -> set[str]:
    """The top-level package names an import statement loads (none for relative ones)."""
    if isinstance(node, ast.Import):
        return {a.name.partition(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return {node.module.partition(".")[0]}
    return set()


def test_the_sans_io_packages_import_only_the_standard_library() -> None:
    found = []
    for name, path in modules().items():
        if not name.startswith(PURE):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for top in _top_names(node) - {"toolwire"}:
                if top not in sys.stdlib_module_names or top == "asyncio":
                    found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {top}")
    assert not found
