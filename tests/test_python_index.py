"""The shared one-walk index of a Python file gives exactly what separate `ast.walk` passes gave, in the same
order, on every Python file of this repository and its rule cases."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from precisionlint.sources.python_index import PythonIndex, all_statements

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("precisionlint/**/*.py"), *ROOT.glob("rules/**/*.py"), *ROOT.glob("tests/*.py")])


def _aliases_by_walk(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _constants_by_walk(tree: ast.Module) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if counts.get(node.targets[0].id) == 1:
                try:
                    values[node.targets[0].id] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    pass
    return values


def _block_by_walk(tree: ast.Module, statement: ast.stmt) -> tuple[ast.AST, list[ast.stmt]] | None:
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and statement in block:
                return parent, block
    return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_index_equals_separate_walks(path: Path) -> None:
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        pytest.skip("not valid Python (a parse-error case)")
    index = PythonIndex(tree)
    walked = list(ast.walk(tree))
    # every node but the contexts and operators (shared singletons no pass looks for), in ast.walk's order
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    assert index.nodes == [n for n in walked if not isinstance(n, leaves)]
    assert index.calls == [n for n in walked if isinstance(n, ast.Call)]
    assert index.imports == [n for n in walked if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert index.import_aliases() == _aliases_by_walk(tree)
    assert index.module_constants() == _constants_by_walk(tree)
    assert index.module_constants().keys() <= index.module_constant_names()
    assert sorted(map(id, all_statements(tree))) == sorted(id(n) for n in walked if isinstance(n, ast.stmt))
    expressions = [n for n in walked if isinstance(n, ast.Expr)]
    for statement in expressions:
        if isinstance(statement.value, ast.Call):
            assert index.statement_of(statement.value) is statement
        assert index.block_of(statement) == _block_by_walk(tree, statement)
    assert all(index.statement_of(call) is None for call in index.calls
               if not any(e.value is call for e in expressions))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_an_index_pruned_to_lines_keeps_the_calls_on_them_in_order(path: Path) -> None:
    """Pruned to some lines, the index still has every import, assignment count, block and expression
    statement, and of the calls exactly those whose lines take in one of the lines, in ast.walk's order."""
    from precisionlint.core.model import Document

    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        pytest.skip("not valid Python (a parse-error case)")
    whole = PythonIndex(tree)
    count = max((getattr(n, "end_lineno", 0) or 0 for n in whole.nodes), default=1)
    for lines in ([], [1], list(range(1, count + 1, 7)), list(range(3, count + 1, 23))):
        pruned = PythonIndex(tree, lines)
        assert pruned.pruned and not whole.pruned
        assert pruned.imports == whole.imports and pruned.assigned == whole.assigned
        assert pruned.import_aliases() == whole.import_aliases()
        assert pruned.module_constants() == whole.module_constants()
        assert pruned._blocks == whole._blocks and pruned._statements.keys() <= whole._statements.keys()
        expected = [call for call in whole.calls if any(call.lineno <= line <= (call.end_lineno or 0)
                                                       for line in lines)]
        assert pruned.calls == expected
    text = path.read_text(encoding="utf-8", errors="replace")
    from precisionlint.sources.python_index import _statement_lines

    for lines in ([], [1], list(range(1, count + 1, 7)), list(range(3, count + 1, 23))):
        # Statements pruned too (on_lines): every import, the module's constants, and the calls on the lines
        # with their expression statements and blocks, all as the whole walk has them.
        pruned = PythonIndex(tree, lines, statements=_statement_lines(text, lines))
        assert pruned.imports == whole.imports and pruned.import_aliases() == whole.import_aliases()
        assert pruned.module_constants() == whole.module_constants()
        expected = [call for call in whole.calls if any(call.lineno <= line <= (call.end_lineno or 0)
                                                       for line in lines)]
        assert pruned.calls == expected
        for call in pruned.calls:
            statement = whole.statement_of(call)
            assert pruned.statement_of(call) is statement
            if statement is not None:
                assert pruned.block_of(statement) == whole.block_of(statement)
    document = Document(path.name, text, "python", tree=tree)
    assert PythonIndex.on_lines(document, [1]) is PythonIndex.on_lines(document, [1])  # kept for the next pass
    assert PythonIndex.on_lines(document, [1]) is not PythonIndex.of(document)
    assert PythonIndex.on_lines(document, [1]) is PythonIndex.of(document)  # the whole index, once built


def test_statements_pruned_to_lines_keep_decorated_calls_and_count_every_assignment() -> None:
    """A decorator stands above its `def` line; a constant assigned again in a function that the pruned walk
    skips is no constant."""
    from precisionlint.sources.python_index import _statement_lines

    text = ("import torch\nPRECISION = 'highest'\n\n@configure(precision='16-mixed')\ndef f():\n    pass\n\n"
            "def g():\n    global PRECISION\n    PRECISION = 'high'\n\ntorch.set_float32_matmul_precision(PRECISION)\n")
    tree = ast.parse(text)
    lines = [4, 12]
    pruned = PythonIndex(tree, lines, statements=_statement_lines(text, lines))
    assert [ast.unparse(call.func) for call in pruned.calls] == ["configure", "torch.set_float32_matmul_precision"]
    assert pruned.module_constants() == {} == PythonIndex(tree).module_constants()
    assert not any(isinstance(node, ast.FunctionDef) and node.name == "g" for node in pruned.nodes)


@pytest.mark.parametrize("path", FILES + sorted(ROOT.glob("examples/**/*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_settings_from_the_lines_that_pass_them_equal_those_of_the_whole_walk(path: Path) -> None:
    from precisionlint.core.model import Document
    from precisionlint.frameworks.python_calls import python_settings

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        pytest.skip("not valid Python (a parse-error case)")
    pruned = python_settings(Document(path.name, text, "python", tree=tree))
    whole_document = Document(path.name, text, "python", tree=tree)
    PythonIndex.of(whole_document)  # built first: python_settings reads it as it is
    assert pruned == python_settings(whole_document)


def test_order_decides_which_import_wins() -> None:
    tree = ast.parse("import numpy as np\ndef f():\n    import torch as np\nfrom a import b as np\n")
    assert PythonIndex(tree).import_aliases() == _aliases_by_walk(tree) == {"np": "torch"}


def test_walk_lists_the_nodes_of_ast_walk_in_its_order() -> None:
    import ast

    from precisionlint.sources.python_index import walk

    for path in sorted(ROOT.joinpath("precisionlint", "script").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert walk(tree) == list(ast.walk(tree)), path


def test_a_file_that_names_no_framework_call_is_not_walked(tmp_path: Path) -> None:
    """Settings come only from calls named as one of CALLS is (Trainer, TrainingArguments, ...): a script that
    imports torch and names none of them has none, and its tree is never indexed; an alias still counts."""
    from precisionlint.core.model import Document
    from precisionlint.frameworks.python_calls import python_settings

    plain = "import torch\nmodel = torch.nn.Linear(2, 2).half()\n"
    document = Document("train.py", plain, "python", tree=ast.parse(plain))
    assert python_settings(document) == []
    assert document.python_index is None
    aliased = "from lightning import Trainer as T\nT(precision='16-mixed')\n"
    document = Document("train.py", aliased, "python", tree=ast.parse(aliased))
    assert [(s.name, s.value) for s in python_settings(document)] == [("precision", "16-mixed")]


def test_a_file_that_passes_no_setting_keyword_is_not_walked() -> None:
    """Framework code names Trainer everywhere (imports, hints) without passing a precision: no keyword of CALLS
    followed by `=` means no setting, and no walk. Every spelling Python allows between a keyword and its `=`
    (spaces, a newline inside the call, a line continuation, a comment) still gets the walk."""
    from precisionlint.core.model import Document
    from precisionlint.frameworks.python_calls import python_settings

    hinted = "from lightning import Trainer\n\ndef setup(trainer: Trainer) -> None:\n    trainer.fit(model)\n"
    document = Document("callbacks.py", hinted, "python", tree=ast.parse(hinted))
    assert python_settings(document) == []
    assert document.python_index is None
    for between in ("", " ", "\n    ", " \\\n    ", "  # mixed precision\n    "):
        text = f"from lightning import Trainer\nTrainer(\n    precision{between}='bf16-mixed',\n)\n"
        document = Document("train.py", text, "python", tree=ast.parse(text))
        assert [(s.name, s.value) for s in python_settings(document)] == [("precision", "bf16-mixed")], between
    positional = "import torch\ntorch.set_float32_matmul_precision('high')\n"
    document = Document("train.py", positional, "python", tree=ast.parse(positional))
    assert [(s.name, s.value) for s in python_settings(document)] == [("tf32_matmul_precision", "high")]


def test_the_setting_scan_finds_what_one_expression_of_all_keywords_finds() -> None:
    """The keyword scan (str.find per keyword) answers may_pass_a_setting as one regular expression of every
    keyword would, and finds at least every place that expression matches (lines only widen a pruned walk)."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from precisionlint.frameworks.python_calls import (
        _POSITIONAL_CALLS,
        _SETTING_KEYWORDS,
        _setting_offsets,
        may_pass_a_setting,
    )

    # a comment runs to the end of its line: an `=` inside it is not the keyword's
    expression = re.compile(r"\b(?:" + "|".join(_SETTING_KEYWORDS) + r")(?:\s|\\|#[^\n]*\n)*=")
    pieces = st.sampled_from([*_SETTING_KEYWORDS, "set_float32_matmul_precision", "=", "==", " ", "\n", "\\\n",
                              "# c", "x", "_", "(", ",", "self.", "1", "mixed_", "fp16_"])

    @settings(max_examples=500, deadline=None)
    @given(st.lists(pieces, max_size=10).map("".join))
    def agrees(text: str) -> None:
        expected = [m.start() for m in expression.finditer(text)]
        found = {offset for offset, _ in _setting_offsets(text)}
        assert set(expected) <= found
        assert may_pass_a_setting(text) == bool(expected or any(name in text for name in _POSITIONAL_CALLS))

    agrees()


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_walk_pruned_to_the_lines_of_names_finds_every_read_of_them_in_order(path: Path) -> None:
    """walk_on_lines over the lines where some names are written finds every read of those names that the
    whole walk finds, in its order, and walks no statement off those lines (what deprecated-amp-api and
    framework-version-mismatch read instead of walking the whole tree)."""
    from precisionlint.checks.framework_version_mismatch import _api_lines, _walk
    from precisionlint.sources.python_index import lines_holding, takes_in, walk, walk_on_lines

    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        pytest.skip("not valid Python (a parse-error case)")
    if not text.isascii() or "\r" in text:
        text = text.encode("ascii", "replace").decode().replace("\r", " ")  # the same lines, countable
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            pytest.skip("no longer Python without its non-ASCII characters")
    whole = walk(tree)
    read = sorted({n.id for n in whole if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)})
    for names in [read[i:i + 2] for i in range(0, len(read), 9)]:
        lines = lines_holding(text, tuple(names))
        assert lines is not None  # this repository's files are ASCII, without carriage returns
        pruned = walk_on_lines(tree, lines)
        assert [n for n in pruned if isinstance(n, ast.Name) and n.id in names] == [
            n for n in whole if isinstance(n, ast.Name) and n.id in names]
        assert all(takes_in(n, lines) for n in pruned if isinstance(n, ast.stmt))
    # the rule's API walk: the same uses, guarded alike, in the same order
    assert [(n, g) for n, g in _walk(tree, _api_lines(text)) if not isinstance(n, ast.ImportFrom) or n.module in (
        "torch", "torch.amp")] == [(n, g) for n, g in _walk(tree) if not isinstance(n, ast.ImportFrom) or n.module in (
            "torch", "torch.amp")]


def test_the_pruned_walk_leaves_out_the_statements_off_the_lines() -> None:
    """On a training script that names GradScaler in two places, the API walk visits those statements (and
    the blocks around them) only, not the rest of the file; the whole walk visits every node."""
    from precisionlint.sources.python_index import lines_holding, walk, walk_on_lines

    body = "".join(f"def helper_{i}(x):\n    y = x * {i} + torch.ones(3).sum()\n    return y\n" for i in range(50))
    text = ("import torch\nfrom torch.amp import GradScaler\n" + body
            + "def train(model):\n    scaler = GradScaler()\n    return scaler\n")
    tree = ast.parse(text)
    lines = lines_holding(text, ("GradScaler",))
    assert lines == [2, text.count("\n") - 1]
    pruned = walk_on_lines(tree, lines)
    assert len(pruned) < len(walk(tree)) / 20
    assert sum(isinstance(n, ast.FunctionDef) for n in pruned) == 1
    assert lines_holding("x = 1\r\nGradScaler()\n", ("GradScaler",)) is None  # lines not countable: walk whole
    assert lines_holding("é = GradScaler()\n", ("GradScaler",)) is None


def test_the_from_torch_pattern_finds_what_a_word_boundary_finds_at_the_speed_of_its_literal() -> None:
    """framework-version-mismatch finds `from torch` lines with a pattern that starts with its literal and tests
    the word boundary after it: the same positions as `\\bfrom...` on every file of this repository and on the
    edge cases, and a scan about as fast as a search for the literal (the `\\b` first was tried at every position
    of the text: 35 times slower on real scripts)."""
    import re
    import time

    from precisionlint.checks.framework_version_mismatch import _FROM_TORCH

    pattern, bounded = re.compile(_FROM_TORCH), re.compile(r"\bfrom(?:\s|\\)+torch\b")
    edges = ["from torch", "xfrom torch", "_from torch", "\u00e9from torch", "\u00e9 from torch", "from\\\ntorch",
             "1from torch", "from  torchx", ".from torch", "fromfrom torch", "from torch from torch", "(from\ttorch"]
    for text in [*edges, *(path.read_text(encoding="utf-8") for path in FILES)]:
        assert [m.start() for m in pattern.finditer(text)] == [m.start() for m in bounded.finditer(text)], text[:80]
    text = "for x in range(10):\n    y = frame.f_back if x else form\n" * 40_000  # 2 MB without a match

    def took(scan: Any) -> float:
        start = time.perf_counter()
        scan()
        return time.perf_counter() - start

    literal = min(took(lambda: text.find("from torch")) for _ in range(3))
    found = min(took(lambda: list(pattern.finditer(text))) for _ in range(3))
    assert found < 20 * literal + 0.002, (found, literal)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_statements_pruned_to_lines_are_those_of_the_whole_walk_that_take_in_the_lines(path: Path) -> None:
    """all_statements with lines gives every statement the whole walk gives whose lines, and every enclosing
    statement's lines, take in one of the lines; and every annotation deprecated-amp-api looks for on a use's
    line is found from them (it reads those, not the whole file)."""
    from precisionlint.checks.deprecated_amp_api import _annotations_of
    from precisionlint.sources.python_index import takes_in

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, ValueError):
        pytest.skip("not valid Python (a parse-error case)")
    enclosing: dict[int, list[ast.stmt]] = {}

    def note(node: ast.AST, outer: list[ast.stmt]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                enclosing[id(child)] = outer
                note(child, [*outer, child])
            else:
                note(child, outer)

    note(tree, [])
    every = all_statements(tree)
    last = max((s.end_lineno or s.lineno for s in every), default=1)
    for lines in ([1], list(range(1, last + 1, 7)), list(range(3, last + 1, 31)), [last]):
        chosen = all_statements(tree, lines)
        expected = [s for s in every if takes_in(s, lines) and all(takes_in(o, lines) for o in enclosing[id(s)])]
        assert sorted(map(id, chosen)) == sorted(map(id, expected))
        on_lines = [a for a in _annotations_of(every)
                    if any(a.lineno <= line <= (a.end_lineno or a.lineno) for line in lines)]
        assert {id(a) for a in on_lines} <= {id(a) for a in _annotations_of(chosen)}
