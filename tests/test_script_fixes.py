"""Fixes of the script rules: applying a bad case's edits gives its `.fixed` file, and the fixed text has no
finding of that rule left (so a second run changes nothing).

The project's fix applier lives elsewhere; `apply` here is the minimal, independent reading of the Edit
contract (character offsets into the original text, applied from the end so earlier offsets stay valid).
"""

from __future__ import annotations

import pytest

from precisionlint.checks import find_rule
from precisionlint.core.model import Finding
from precisionlint.engine.check import check_bytes
from precisionlint.engine.options import EngineOptions
from precisionlint.engine.prefilter import PYTHON_KEYWORDS
from tests.rule_cases import RuleCase, load_cases

SCRIPT_CASES = [c for c in load_cases() if (rule := find_rule(c.rule_name)) is not None and rule.target == "script"]
FIXED = [(c, p) for c in SCRIPT_CASES for p in c.bad if c.fixed_for(p) is not None]


def findings(case: RuleCase, text: str, name: str = "case.py") -> list[Finding]:
    """The rule's findings in `text`, read as the file `name` would be (a script, or a notebook's cells)."""
    from precisionlint.sources import format_of

    rule = find_rule(case.rule_name)
    assert rule is not None
    from precisionlint.hardware.names import find_gpu

    gpus = tuple(find_gpu(name) for name in case.gpus)  # hardware rules run only with target GPUs
    options = EngineOptions(rules=[rule], gpus=gpus, prefilter=False)
    fmt = format_of(name)
    assert fmt is not None
    return check_bytes(name, text.encode(), fmt, options).findings


def apply(text: str, found: list[Finding], unsafe: bool) -> str:
    edits = [
        edit
        for finding in found
        if finding.fix is not None and (unsafe or finding.fix.applicability == "safe")
        for edit in finding.fix.edits
    ]
    edits.sort(key=lambda e: (e.start, e.end))
    for before, after in zip(edits, edits[1:], strict=False):
        assert before.end <= after.start or before == after, f"overlapping edits {before} {after}"
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text


def test_every_fixable_script_rule_has_a_fixed_case() -> None:
    fixable = {c.rule_name for c in SCRIPT_CASES if find_rule(c.rule_name).fixable}  # type: ignore[union-attr]
    assert fixable == {c.rule_name for c, _ in FIXED}


@pytest.mark.parametrize("case,path", FIXED, ids=[f"{c.rule_name}/{p.name}" for c, p in FIXED])
def test_fix_gives_fixed_file_and_is_clean(case: RuleCase, path) -> None:
    text = path.read_text(encoding="utf-8")
    fixed_path = case.fixed_for(path)
    assert fixed_path is not None
    fixed = apply(text, findings(case, text, path.name), case.unsafe_fixes)
    assert fixed == fixed_path.read_text(encoding="utf-8")
    assert findings(case, fixed, path.name) == []
    if path.suffix == ".py":
        compile(fixed, str(fixed_path), "exec")


@pytest.mark.parametrize("case", SCRIPT_CASES, ids=lambda c: c.rule_name)
def test_fixes_have_the_declared_safety(case: RuleCase, tmp_path, monkeypatch) -> None:
    """A rule documents its fix safety; every fix it offers must say the same. Checked from an empty folder:
    fix safety may follow the project's declared versions, and these single files declare none."""
    from precisionlint.project.model import current

    current().forget()
    monkeypatch.chdir(tmp_path)
    rule = find_rule(case.rule_name)
    assert rule is not None
    for path in case.bad:
        for finding in findings(case, path.read_text(encoding="utf-8"), path.name):
            if finding.fix is None:
                continue
            assert rule.fixable
            assert finding.fix.applicability == ("unsafe" if case.unsafe_fixes else "safe")
            assert finding.fix.edits and all(e.start <= e.end for e in finding.fix.edits)


@pytest.mark.parametrize("case", SCRIPT_CASES, ids=lambda c: c.rule_name)
def test_bad_cases_pass_the_prefilter(case: RuleCase) -> None:
    for path in case.bad:
        data = path.read_bytes()
        assert any(word in data for word in PYTHON_KEYWORDS), f"{path.name} would be skipped by the prefilter"


def _models() -> list:
    """Script models of real files: every Python rule case and this package's own script modules."""
    from pathlib import Path

    from precisionlint.frameworks.documents import load_document
    from precisionlint.script.build import build_script_model

    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "rules").glob("*/*.py")) + sorted((root / "precisionlint" / "script").glob("*.py"))
    models = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            models.append(build_script_model(load_document(str(path), text, "python")))
        except Exception:  # a parse-error case
            continue
    return models


_PIECES = ("", "x", "(", ")", "[", "]", ";", "; y = 2", "\n", "\nz = 1", "\\\n", "  # note", "'", '"""', ",",
           "if a: b", "for", "lambda: 0", "torch.amp.autocast('cuda')", "\n    w", ":", "=", "await f()", "\t")


# A random edit writes `1if` (SyntaxWarning) or a string with `\s` (DeprecationWarning before Python 3.12): the
# parser's warnings about the edited text are not the test's business.
@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
def test_parses_after_agrees_with_a_parse_of_the_whole_file() -> None:
    """The statement-local check of a fix's edits never says "parses" where the whole file would not: random
    edits of every kind (inside statements, across them, in block headers, whole inserted lines) on real files
    give the same answer as parsing the edited file."""
    import ast
    import random

    from precisionlint.core.model import Edit
    from precisionlint.script.fixes import _parses_in_place, apply_edits, parses_after

    rng = random.Random(20261123)
    local = 0
    for model in _models():
        text = model.positions.text
        nodes = [n for n in ast.walk(model.document.tree) if hasattr(n, "end_col_offset")]
        starts = [0, *(model.positions.start(n) for n in nodes), *(i + 1 for i, c in enumerate(text) if c == "\n")]
        for _ in range(40):
            edits = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                start = rng.choice(starts)
                end = min(len(text), start + rng.choice((0, 0, 1, 3, 8, 20)))
                replacement = rng.choice(_PIECES)
                if rng.random() < 0.3 and start == end:
                    indent = text[start : len(text)][: len(text[start:]) - len(text[start:].lstrip(" \t"))]
                    replacement = indent + rng.choice(("clip()", "x = 1; y", "(", "if a: b", "pass  # c")) + "\n"
                edits.append(Edit(start, end, replacement))
            try:
                ast.parse(apply_edits(text, edits))
                whole = True
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                whole = False
            assert parses_after(model, edits) is whole, (model.document.path, edits)
            try:
                local += _parses_in_place(model, edits)
            except (SyntaxError, ValueError):
                pass
    print("decided locally:", local)
    assert local > 50  # the local check does decide a good share of them


_TRICKY = '''import torch
x = 1; y = torch.cuda.amp.autocast()  # comment
z = (1 +
     2)
w = 1 + \\
    2
if x:
    a = 1
elif y:
    b = f"{torch.cuda.amp.autocast()}"
else:
    c = 3
class K:
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, v):
        with torch.cuda.amp.autocast(enabled=True), open(v) as h:  # note
            return v
for i in range(3): print(i)
while False:
    pass
else:
    pass
try:
    pass
except ImportError:
    pass
'''


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
def test_parses_after_agrees_on_every_position_of_a_tricky_file() -> None:
    """Every position of a file with the shapes that make a statement-local check wrong (a line continued by a
    backslash, statements after `;`, decorators, `elif`, an f-string holding an expression, block headers with
    comments, one-line blocks): each kind of edit there gets the answer of a whole-file parse."""
    import ast

    from precisionlint.core.model import Edit
    from precisionlint.frameworks.documents import load_document
    from precisionlint.script.build import build_script_model
    from precisionlint.script.fixes import apply_edits, parses_after

    model = build_script_model(load_document("tricky.py", _TRICKY, "python"))
    pieces = ('"cuda"', "torch.amp", "(", "\n", "; q = 1", "\nq = 2", "\\\n", "if a: b", "'", "x\n", "lambda: 0")
    lines = ("x = 1\n", "    x = 1\n", "        x = 1\n", "    if a: b\n")
    for start in range(len(_TRICKY) + 1):
        candidates = [Edit(start, start, piece) for piece in pieces]
        candidates += [Edit(start, min(start + 3, len(_TRICKY)), piece) for piece in pieces[:3]]
        if start == 0 or _TRICKY[start - 1] == "\n":
            candidates += [Edit(start, start, line) for line in lines]
        for edit in candidates:
            try:
                ast.parse(apply_edits(_TRICKY, [edit]))
                whole = True
            except (SyntaxError, ValueError):
                whole = False
            assert parses_after(model, [edit]) is whole, edit
