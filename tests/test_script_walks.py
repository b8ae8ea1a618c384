"""How much of a file the script model's walks visit: the scope walk leaves out the expressions that cannot bind
a name or poison the module, the collector the names it does not look for, and both give what the whole walks
gave (every Python file of this repository and its rule cases)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from precisionlint.script import scopes
from precisionlint.script.scopes import ScopeTable, build_scopes

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("precisionlint/**/*.py"), *ROOT.glob("rules/**/*.py"), *ROOT.glob("tests/*.py")])

STEP = (
    "def step_{i}(model, batch, optimizer, scaler):\n"
    "    with torch.autocast('cuda', dtype=torch.float16):\n"
    "        loss = model(batch['x'].cuda(), labels=batch['y']).loss / 4 + 0.1 * model.aux[{i}]\n"
    "    scaler.scale(loss).backward()\n"
    "    scaler.step(optimizer)\n"
    "    scaler.update()\n"
    "    return {{'loss': loss.item(), 'lr': optimizer.param_groups[0]['lr']}}\n"
)
SCRIPT = ("import torch\n" + "".join(STEP.format(i=i) for i in range(40))
          + "key = lambda item: item[0]\nif (n := len(sys.argv)) > 1:\n    exec(open('config.py').read())\n")


def _table(table: ScopeTable) -> list[Any]:
    """The table as plain data (scopes by their node), for comparing two builds over one tree."""
    def scope(s: Any) -> Any:
        return None if s is None else (s.kind, s.name, id(s.node))

    found: list[Any] = []
    for key, s in sorted(table.by_node.items()):
        found.append((key, scope(s), scope(s.parent), {k: [id(v) for v in vs] for k, vs in s.bindings.items()},
                      sorted(s.params), sorted(s.global_names), {k: scope(v) for k, v in s.functions.items()},
                      [id(r) for r in s.returns], {k: [(id(v), scope(m)) for v, m in vs] for k, vs in s.attrs.items()},
                      s.fields_are_constants, s.self_name, s.poisoned))
    by_id = {id(s): scope(s) for s in table.by_node.values()}
    imports = table.imports
    found.append([sorted((k, by_id[v]) for k, v in imports.scope_ids.items()) if name == "scope_ids"
                  else repr(getattr(imports, name)) for name in imports.__slots__])
    found.append(sorted(table.compat_ifs.items()))
    found.append(sorted((k, tuple((id(t), b) for t, b in v[0]), v[1]) for k, v in table.contexts.items()))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_scope_walk_without_plain_expressions_builds_the_same_table(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        pytest.skip("not valid Python (a parse-error case)")
    assert _table(build_scopes(tree, text)) == _table(build_scopes(tree))


def test_the_scope_walk_visits_only_the_expressions_on_lines_that_can_bind(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a real-shaped training script, the scope walk visits the lambda, the `:=` and the exec call, and no
    other expression; without the text it visits them all. The tables agree, the lambda's scope included."""
    tree = ast.parse(SCRIPT)
    visited: list[ast.AST] = []
    dispatch = scopes._Builder.visit

    def counting(self: Any, node: ast.AST) -> Any:
        visited.append(node)
        return dispatch(self, node)

    # an expression inside another is visited only when the walk went into the outer one
    inner = {id(child) for node in ast.walk(tree) if isinstance(node, ast.expr)
             for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)}
    monkeypatch.setattr(scopes._Builder, "visit", counting)
    whole = build_scopes(tree)
    every = [n for n in visited if id(n) in inner]
    visited.clear()
    pruned = build_scopes(tree, SCRIPT)
    walked = [n for n in visited if id(n) in inner]
    assert len(every) > 500
    assert 0 < len(walked) < 20  # inside the last three statements only
    # the values of assignments, expression statements and returns on the other lines are not even looked at
    last = SCRIPT.count("\n") - 2
    values = {id(node.value) for node in ast.walk(tree)
              if isinstance(node, (ast.Assign, ast.Expr, ast.Return)) and node.lineno < last}
    assert len(values) >= 200 and not [n for n in visited if id(n) in values]
    assert {n.lineno for n in walked} <= {SCRIPT.count("\n") - 2, SCRIPT.count("\n") - 1, SCRIPT.count("\n")}
    assert _table(pruned) == _table(whole)
    assert pruned.module.poisoned
    assert any(s.kind == "function" and s.name == "<lambda>" for s in pruned.by_node.values())
    assert "n" in pruned.module.bindings


def test_the_scope_walk_tests_only_the_ifs_that_name_a_version_or_feature(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the text and its line starts, an `if` whose lines hold no word of a version or feature test (most
    `if`s of a script) is known not to be one without walking its test; the others, a test spread over several
    lines included, are tested, and the table is the one built without the text."""
    from precisionlint.core.lines import line_starts

    text = (SCRIPT + "".join(f"if step_{i} and not batch_size > {i}:\n    pass\n" for i in range(40))
            + "if (\n    torch.__version__\n    >= '2.4'\n):\n    x = 1\nelif hasattr(torch, 'amp'):\n    x = 2\n"
            + "if _ge_2:\n    x = 3\n")
    tree = ast.parse(text)
    tested: list[str] = []
    is_compat_test = scopes.is_compat_test

    def counting(test: ast.expr) -> bool:
        tested.append(ast.unparse(test))
        return is_compat_test(test)

    monkeypatch.setattr(scopes, "is_compat_test", counting)
    whole = build_scopes(tree)
    assert len(tested) == 44
    tested.clear()
    pruned = build_scopes(tree, text, lambda: line_starts(text))
    assert tested == ["torch.__version__ >= '2.4'", "hasattr(torch, 'amp')", "_ge_2"]
    assert _table(pruned) == _table(whole)
    assert sum(pruned.compat_ifs.values()) == 3


def test_the_collector_visits_only_the_names_of_deprecated_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a deprecated import, the collector looks at the names that import binds, not at every name: the
    model records the same uses."""
    from precisionlint.core.model import Document
    from precisionlint.script import collect
    from precisionlint.script.build import build_script_model

    text = "from torch.cuda.amp import autocast\n" + SCRIPT.replace("torch.autocast('cuda', ", "autocast(")
    names: list[str] = []
    visit_name = collect._Collector.visit_Name

    def counting(self: Any, node: ast.Name) -> None:
        names.append(node.id)
        visit_name(self, node)

    monkeypatch.setattr(collect._Collector, "visit_Name", counting)
    monkeypatch.setattr(collect._Collector, "_dispatch", {})  # methods are looked up once per class: again
    model = build_script_model(Document("train.py", text, "python", tree=ast.parse(text)))
    # no other name: not those found by walking (every step reads model, batch, optimizer, scaler, torch, ...),
    # nor the names an assignment binds (`loss = ...`, `for key in ...`), which visit_Name never records
    assert names.count("autocast") == 40 and set(names) == {"autocast"}
    (record,) = model.deprecated_imports
    assert len(record.uses["autocast"]) == 40


def test_the_flow_analysis_walks_each_expression_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flow analysis asks four questions of each statement's parts (the names it reads for liveness and for
    the taint slice, the taint of a value, the file's functions it calls): one walk of each part answers them
    all, so all its walks together visit fewer nodes than the tree holds (each question walking again visited
    3.4 times as many)."""
    from precisionlint.core.model import Document
    from precisionlint.script import flow_function, flow_liveness, flow_names, flow_shared
    from precisionlint.script.build import build_script_model
    from precisionlint.sources.python_index import walk

    text = "import torch\n" + "".join(
        f"with torch.autocast('cuda', dtype=torch.float16):\n    loss{i} = model(batch[{i}]).mean() + aux(x{i}) / 2\n"
        f"scaler.scale(loss{i}).backward()\nscaler.step(optimizer)\nscaler.update()\nlog(loss{i}.item(), step={i})\n"
        for i in range(200))
    text = ("model = torch.nn.Linear(2, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "scaler = torch.amp.GradScaler('cuda')\n" + text)
    tree = ast.parse(text)
    walked = [0]

    def counting(node: ast.AST) -> list[ast.AST]:
        found = walk(node)
        walked[0] += len(found)
        return found

    for module in (flow_function, flow_liveness, flow_names, flow_shared):
        if hasattr(module, "walk"):
            monkeypatch.setattr(module, "walk", counting)
    of = flow_names.ExpressionFacts.of

    def walking(self: flow_names.ExpressionFacts, node: ast.AST) -> object:
        if id(node) not in self._known:  # a part read for the first time: its nodes are walked
            walked[0] += len(walk(node))
        return of(self, node)

    monkeypatch.setattr(flow_names.ExpressionFacts, "of", walking)
    model = build_script_model(Document("train.py", text, "python", tree=tree))
    assert sum(1 for e in model.events if e.kind == "scaled_backward") == 200  # the flow analysis ran on them
    assert 0 < walked[0] < len(walk(tree))


def test_a_call_that_names_none_of_the_files_defs_is_not_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolving a callee to a def of this file looks nothing up for a call whose name no def of the file has
    (`model(x)`, `loss.backward()`, `torch.ones(3)`: most calls), and still finds `step_3(...)` and
    `self.helper(...)`."""
    from precisionlint.script.values import Resolver

    text = SCRIPT + ("class Trainer:\n    def helper(self):\n        return 1\n"
                     "    def run(self):\n        return self.helper()\n")
    text += "step_3(model, batch, optimizer, scaler)\n"
    tree = ast.parse(text)
    table = build_scopes(tree, text)
    resolver = Resolver(table)
    lookups = [0]
    lookup = ScopeTable.lookup

    def counting(self: ScopeTable, scope: Any, name: str) -> Any:
        lookups[0] += 1
        return lookup(self, scope, name)

    monkeypatch.setattr(ScopeTable, "lookup", counting)
    run = next(s for s in table.by_node.values() if s.name == "run")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    found = {ast.unparse(c.func): resolver.function_for(c.func, run if "self." in ast.unparse(c.func) else table.module)
             for c in calls}
    assert {name for name, f in found.items() if f is not None} == {"step_3", "self.helper"}
    assert lookups[0] == 1  # step_3's; self.helper is found through the method's class


def test_the_flow_analysis_runs_each_function_once_and_skips_what_no_call_can_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no GradScaler shared between functions, each function that matters runs once (callees first), and
    a function with no event of its own that no call of the file names is not run at all: what it returns is
    all its run would give, and nothing reads it (a Lightning `forward`, a `validate` called by the framework).
    A called one still runs, and its caller sees the autocast output it returns."""
    from precisionlint.core.model import Document
    from precisionlint.script import flow_function
    from precisionlint.script.build import build_script_model

    text = (
        "import torch\n"
        "def train(model, x, scaler, optimizer):\n"
        "    loss = predict(model, x).sum()\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "def predict(model, x):\n"
        "    with torch.autocast('cuda'):\n"
        "        return model(x)\n"
        "def validate(model, x):\n"
        "    with torch.autocast('cuda'):\n"
        "        return model(x).mean()\n"
    )
    runs: list[str] = []
    run = flow_function.FunctionFlow.run

    def counting(self: flow_function.FunctionFlow) -> frozenset[int]:
        runs.append(self.scope.name)
        return run(self)

    monkeypatch.setattr(flow_function.FunctionFlow, "run", counting)
    model = build_script_model(Document("train.py", text, "python", tree=ast.parse(text)))
    assert sorted(runs) == ["predict", "train"]
    (backward,) = [e for e in model.events if e.kind == "scaled_backward"]
    assert [r.span.line for r in backward.reached] == [8]
