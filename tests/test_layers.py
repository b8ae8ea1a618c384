"""Imports point down: every module belongs to a layer, and an import (at the top of a module or inside a
function alike) may reach only its own layer or a lower one, without closing a cycle. `python tests/test_layers.py`
prints the imports of the tree that break this (none).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "precisionlint"

# Lowest first. A module's layer is that of the longest prefix listed here that names it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("precisionlint", "precisionlint.core")),
    ("formats", ("precisionlint.sources",)),
    ("frameworks", ("precisionlint.frameworks",)),
    ("hardware", ("precisionlint.hardware",)),
    ("analysis", ("precisionlint.script", "precisionlint.project", "precisionlint.values")),
    ("checks", ("precisionlint.checks",)),
    ("engine", ("precisionlint.engine", "precisionlint.engine.suppress")),
    ("fix", ("precisionlint.fix",)),
    ("run", ("precisionlint.run",)),
    ("output", ("precisionlint.output", "precisionlint.output.frameworks_report")),
    ("advise", ("precisionlint.advise",)),
    ("cli", ("precisionlint.cli", "precisionlint.__main__")),
    ("server", ("precisionlint.server",)),
)
_RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    best, length = "core", -1
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = name, len(prefix)
    return best


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of the package's modules, wherever in the module they are written."""

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for name in names:
                if not name.startswith("precisionlint"):
                    continue
                target = resolve(name)
                if target is not None and target != module and not module.startswith(target + "."):
                    edges[module].add(target)  # a package's own __init__ runs first anyway: not an edge
    return edges


def _cycle_edges(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The edges inside a strongly connected component (an import cycle), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    component: dict[str, int] = {}
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component[member] = index[node]
                if member == node:
                    break

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))  # one frame per module on the path; restored for the other tests
    try:
        for node in list(edges):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return {(a, b) for a, targets in edges.items() for b in targets
            if component.get(a) is not None and component.get(a) == component.get(b)}


def violations() -> set[str]:
    edges = imports(modules())
    found: set[str] = set()
    for source, targets in edges.items():
        for target in targets:
            if _RANK[layer_of(target)] > _RANK[layer_of(source)]:
                found.add(f"up {source} -> {target}")
    # Within one layer, the edges of a cycle are the fault; across layers the upward edge is (listed above).
    found |= {f"cycle {a} -> {b}" for a, b in _cycle_edges(edges) if layer_of(a) == layer_of(b)}
    return found


def test_every_module_has_a_layer_by_name() -> None:
    unnamed = [module for module in modules() if module != "precisionlint" and not any(
        module == prefix or module.startswith(prefix + ".") for _, prefixes in LAYERS for prefix in prefixes
        if prefix != "precisionlint")]
    assert not unnamed, f"add these modules to a layer in tests/test_layers.py: {unnamed}"


def test_no_import_points_up_or_closes_a_cycle() -> None:
    found = sorted(violations())
    assert not found, ("imports that point up a layer or close a cycle (move the code down, or pass what it needs "
                       "in from above):\n" + "\n".join(found))


def test_the_checker_sees_a_cycle_within_a_layer(tmp_path, monkeypatch) -> None:
    package = tmp_path / "precisionlint"
    (package / "fix").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "fix" / "__init__.py").write_text("")
    (package / "fix" / "plan.py").write_text("def plan():\n    from precisionlint.fix.verify import verify\n")
    (package / "fix" / "verify.py").write_text("from precisionlint.fix.plan import plan\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    limit = sys.getrecursionlimit()
    assert violations() == {"cycle precisionlint.fix.plan -> precisionlint.fix.verify",
                            "cycle precisionlint.fix.verify -> precisionlint.fix.plan"}
    assert sys.getrecursionlimit() == limit


def test_the_checker_sees_an_upward_import_inside_a_function(tmp_path, monkeypatch) -> None:
    package = tmp_path / "precisionlint"
    (package / "sources").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text("")
    (package / "sources" / "__init__.py").write_text("def load():\n    from precisionlint.cli import main\n")
    (package / "cli.py").write_text("from precisionlint.sources import load\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert violations() == {"up precisionlint.sources -> precisionlint.cli"}


if __name__ == "__main__":
    print("\n".join(sorted(violations())))
