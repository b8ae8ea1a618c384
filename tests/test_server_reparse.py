"""The language server parses again only the top-level statements an edit touched, and those after them when
the line count changes (server/reparse.py): the tree it builds is the one `ast.parse` gives, node for node, and
the findings are those of a whole check."""

from __future__ import annotations

import ast
import random
import warnings
from pathlib import Path

import pytest

from precisionlint.server.analysis import ProjectConfigs, analyse
from precisionlint.server.reparse import _IMPORT_LINE, import_lines_differ, reparsed

ROOT = Path(__file__).resolve().parent.parent
# What typing inserts, among it what changes how the lines around it parse: brackets, quotes, a line
# continuation, a colon that opens a block, a clause without its statement, a statement after a semicolon, a
# future import, a NUL, a form feed.
PIECES = ["(", ")", "[", "]", "{", "}", '"', "'", '"""', "'''", "\\", ":", "#", " ", "\t", "x", "=", ",", ".", "@",
          "if x:", "else:", "  # edit", "f'{", "lambda", "\f", "def ", "async ", "\x00", ";", "y = 2;", "<>",
          "from __future__ import annotations", "é"]


def dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def edit(text: str, rng: random.Random) -> str:
    """One edit, as typing makes them: mostly within a line, sometimes a line added or removed."""
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    line = lines[index]
    kind = rng.random()
    if kind < 0.1:
        at = rng.randint(0, len(line))  # Enter
        lines[index:index + 1] = [line[:at], " " * rng.choice((0, 4, 8)) + line[at:].lstrip()]
    elif kind < 0.15:
        del lines[index]
    elif kind < 0.55:
        at = rng.randint(0, len(line))
        lines[index] = line[:at] + rng.choice(PIECES) + line[at:]
    elif kind < 0.75 and line:
        at = rng.randrange(len(line))
        lines[index] = line[:at] + line[at + rng.randint(1, 3):]
    elif kind < 0.85:
        lines[index] = ""
    else:
        other = rng.randrange(len(lines))
        lines[index], lines[other] = lines[other], lines[index]
    return "\n".join(lines)


def test_the_tree_is_the_one_ast_parse_gives_after_any_edit_of_real_files() -> None:
    rng = random.Random(31)
    files = sorted((ROOT / "precisionlint").rglob("*.py"))
    rng.shuffle(files)
    reused = refused_valid = 0
    for path in files[:40]:
        text = path.read_text(encoding="utf-8")
        tree = parse(text)
        assert tree is not None
        for _ in range(20):
            new = edit(text, rng)
            if new == text:
                continue
            got = reparsed(text, tree, new)
            want = parse(new)
            if want is None:
                assert got is None, (path, new)  # the whole parse reports the error, with its position
                continue
            if got is None:
                refused_valid += 1
            else:
                reused += 1
                assert dump(got) == dump(want), path
            if rng.random() < 0.5:  # go on typing from here, on the tree just built (its nodes shared)
                text, tree = new, got if got is not None else want
    assert reused > 5 * refused_valid  # most edits that leave valid code need no whole parse


@pytest.mark.parametrize("old, new", [
    ("a = 1; b = 2\nc = 3\n", "a = 1; b = 22\nc = 3\n"),  # statements sharing a line
    ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = (\nc = 3\n"),  # an open bracket swallows what follows
    ("a = 1\nb = 2\nc = 3\n", 'a = 1\nb = """\nc = 3\n'),  # so does an open string
    ("a = 1 + \\\n  2\nb = 3\n", "a = 1 + \\\n  2\nb = 4\n"),  # a continuation inside a statement
    ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2 \\\nc = 3\n"),  # a continuation at a border
    ("a = 1\nb = 2\n", "a = 1\nb = 2\nc = 3"),  # a line added
    ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = (2,\n 3)\nc = 3\n"),  # a line added inside a statement
    ("a = 1\nb = 2\nc = 3\n", "a = 1\nc = 3\n"),  # a line removed
    ("if a:\n    b = 1\nc = 2\n", "if a:\n    b = 1\nelse:\n"),  # a clause without its statement
    ("x = 1\ny = 2\n", "x = 1\nfrom __future__ import annotations\n"),
    ("a = 1\nb = 2\n", "a = 1\nb = 2\x00\n"),
    ("@deco\ndef f():\n    pass\nx = 1\n", "@deco\ndef f():\n    pass\nx = 2\n"),
    ("def f():\n    pass\n# note\nx = 1\n", "def f():\n    pass\n  y = 1\nx = 1\n"),  # an unexpected indent
    ("a = 1\r\nb = 2\r\n", "a = 1\r\nb = 3\r\n"),
])
def test_edits_at_the_borders_of_statements(old: str, new: str) -> None:
    tree = parse(old)
    assert tree is not None
    got = reparsed(old, tree, new)
    want = parse(new)
    if want is None:
        assert got is None
    elif got is not None:
        assert dump(got) == dump(want)


def training_script() -> str:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from server_latency import training_script as generate
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return generate(600)


def test_an_edited_buffer_parses_only_the_statements_it_touched(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "train.py"
    text = training_script()
    path.write_text(text, encoding="utf-8")
    configs = ProjectConfigs()
    previous = analyse(path, text, configs)
    assert previous.document is not None and previous.findings
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.strip().startswith("scaler.scale(loss).backward()"):
            lines[number] = line.replace("scaler.scale(loss).backward()", "loss.backward()")  # a finding changes
            break
    else:
        raise AssertionError("no backward() line")
    new = "\n".join(lines)
    got = analyse(path, new, configs, previous=previous)
    fresh = analyse(path, new, configs)
    assert got.findings == fresh.findings != previous.findings
    assert got.document is not None and fresh.document is not None
    assert dump(got.document.tree) == dump(fresh.document.tree)
    old_body, new_body = previous.document.tree.body, got.document.tree.body
    shared = sum(1 for node in new_body if any(node is old for old in old_body))
    assert shared == len(new_body) - 1  # one top-level statement parsed again, every other one shared


def test_a_check_leaves_the_tree_it_read_as_parsed(tmp_path: Path) -> None:
    """What the shared statements rely on: no rule, model or reader changes a node."""
    (tmp_path / ".git").mkdir()
    path = tmp_path / "train.py"
    text = training_script()
    path.write_text(text, encoding="utf-8")
    analysis = analyse(path, text, ProjectConfigs())
    assert analysis.document is not None and analysis.findings
    tree = analysis.document.tree
    assert isinstance(tree, ast.Module)
    assert dump(tree) == dump(ast.parse(text))
    for node in ast.walk(tree):
        assert set(vars(node)) <= {*node._fields, *node._attributes}, type(node).__name__


def test_import_lines_compared_on_the_edited_lines_only_as_on_the_whole_texts() -> None:
    rng = random.Random(7)
    files = sorted((ROOT / "precisionlint").rglob("*.py"))
    rng.shuffle(files)
    changed = 0
    for path in files[:40]:
        text = path.read_text(encoding="utf-8")
        for _ in range(20):
            new = edit(text, rng)
            if rng.random() < 0.2:  # an import line typed or broken
                lines = new.split("\n")
                at = rng.randrange(len(lines))
                lines[at] = rng.choice(["import os", "from x import y", "  from", "\timport", "fromage = 1"])
                new = "\n".join(lines)
            whole = _IMPORT_LINE.findall(text) != _IMPORT_LINE.findall(new)
            assert import_lines_differ(text, new) is whole, path
            changed += whole
            text = new
    assert changed > 20
    assert import_lines_differ(None, "x = 1\n") and not import_lines_differ("x = 1\n", "x = 1\n")
