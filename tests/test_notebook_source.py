"""Notebooks: code cells checked as one program in cell order, magics ignored, findings at cell and line (as
ruff reports them), fixes written into the cells' sources in place and shown per cell; through the real CLI
on notebooks written to disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precisionlint.frameworks.documents import load_document
from precisionlint.sources import format_of


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
             **({"execution_count": 1, "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}]}
                if kind == "code" else {})}
            for kind, source in cells
        ],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n"


NOTEBOOK = _notebook(
    ("markdown", "# Fine-tune\n"),
    ("code", "%pip install torch\n!nvidia-smi\nimport torch\nfrom torch.cuda.amp import GradScaler\n"),
    ("code", "%%bash\necho this is not python (\n"),
    ("code", "files = !ls\nscaler = GradScaler()\nmodel?\n"),
)


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_ipynb_is_a_format_and_cells_join_in_order() -> None:
    assert format_of("nb/train.ipynb") == "notebook"
    document = load_document("train.ipynb", NOTEBOOK, "notebook")
    assert document.format == "python"
    assert document.text.splitlines() == [
        "pass", "pass", "import torch", "from torch.cuda.amp import GradScaler",
        "pass", "",
        "pass", "scaler = GradScaler()", "pass",
    ]


def test_findings_at_cell_and_line(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    path.write_text(NOTEBOOK)
    result = _check(tmp_path, "--select", "deprecated-amp-api", "train.ipynb")
    assert "train.ipynb:cell 1:4:1: PL207" in result.stdout
    data = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json",
                             "train.ipynb").stdout)
    assert [(f["cell"], f["line"]) for f in data] == [(1, 4)]


def test_fix_rewrites_only_the_edited_sources(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    path.write_text(NOTEBOOK)
    before = json.loads(NOTEBOOK)
    done = _check(tmp_path, "--select", "deprecated-amp-api", "--fix", "--unsafe-fixes", "train.ipynb")
    assert done.returncode == 0, done.stdout + done.stderr
    after = json.loads(path.read_text())
    code = [c for c in after["cells"] if c["cell_type"] == "code"]
    assert code[0]["source"] == ["%pip install torch\n", "!nvidia-smi\n", "import torch\n",
                                 "from torch.amp import GradScaler\n"]
    assert code[2]["source"] == ["files = !ls\n", 'scaler = GradScaler("cuda")\n', "model?\n"]
    for old, new in zip(before["cells"], after["cells"], strict=True):  # outputs, metadata, ids: as they were
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
    # Byte for byte, the only lines that changed are the two edited source lines.
    changed = [(a, b) for a, b in zip(NOTEBOOK.splitlines(), path.read_text().splitlines(), strict=True) if a != b]
    assert changed == [('    "from torch.cuda.amp import GradScaler\\n"', '    "from torch.amp import GradScaler\\n"'),
                       ('    "scaler = GradScaler()\\n",', '    "scaler = GradScaler(\\"cuda\\")\\n",')]


def _styled(indent: str, newline: str, final: bool, ensure_ascii: bool) -> str:
    cells = [
        {"cell_type": "markdown", "id": "a1", "metadata": {}, "source": ["# Entraînement\n"]},
        {"cell_type": "code", "execution_count": 3, "id": "b2", "metadata": {"tags": ["train"], "zeta": 1, "alpha": 2},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["perte: 0.5 ✓\n"]}],
         "source": "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=True)\nprint('é')"},
    ]
    text = json.dumps({"nbformat_minor": 5, "cells": cells, "metadata": {"language_info": {"name": "python"}},
                       "nbformat": 4}, indent=indent, ensure_ascii=ensure_ascii)
    return text.replace("\n", newline) + (newline if final else "")


@pytest.mark.parametrize(("indent", "newline", "final", "ensure_ascii"), [
    (" ", "\n", True, False), ("  ", "\r\n", False, True), ("\t", "\n", False, False), ("    ", "\n", True, True),
])
def test_fix_keeps_the_json_style(tmp_path: Path, indent: str, newline: str, final: bool, ensure_ascii: bool) -> None:
    """Indentation, line endings, the final newline, key order, escaping and a source written as one string
    all stay as they were: the file differs only inside the edited string."""
    text = _styled(indent, newline, final, ensure_ascii)
    path = tmp_path / "style.ipynb"
    path.write_bytes(text.encode())
    (tmp_path / "requirements.txt").write_text("torch>=2.4\n")  # the replacement exists: a safe fix
    _check(tmp_path, "--select", "deprecated-amp-api", "--fix", "style.ipynb")
    old_source = "import torch\\nscaler = torch.cuda.amp.GradScaler(enabled=True)\\nprint('"
    new_source = 'import torch\\nscaler = torch.amp.GradScaler(\\"cuda\\", enabled=True)\\nprint(\''
    assert old_source in text
    assert path.read_bytes() == text.replace(old_source, new_source).encode()


def test_diff_shows_each_changed_cell(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    path.write_text(NOTEBOOK)
    result = _check(tmp_path, "--select", "deprecated-amp-api", "--diff", "--unsafe-fixes", "train.ipynb")
    assert result.stdout.splitlines()[:9] == [
        "--- a/train.ipynb:cell 1", "+++ b/train.ipynb:cell 1", "@@ -1,4 +1,4 @@",
        " %pip install torch", " !nvidia-smi", " import torch",
        "-from torch.cuda.amp import GradScaler", "+from torch.amp import GradScaler",
        "--- a/train.ipynb:cell 3",
    ]
    assert path.read_text() == NOTEBOOK  # --diff writes nothing


def test_whole_lines_removed_at_the_start_middle_and_end_of_cells(tmp_path: Path) -> None:
    """Removing a line takes its list item (and one separator) out; the last line of a cell, which Jupyter
    saves without a line break, is removed too (in the program it ends with the break that joins cells)."""
    text = _notebook(("code", "import torch\n# precisionlint: disable[PL101]"),
                     ("code", "# precisionlint: disable[PL102]\nx = 1\n"),
                     ("code", "y = 2\n# precisionlint: disable[PL103]\nz = 3"))
    path = tmp_path / "d.ipynb"
    path.write_text(text)
    _check(tmp_path, "--extend-select", "unused-suppression", "--fix", "d.ipynb")
    sources = [c["source"] for c in json.loads(path.read_text())["cells"]]
    assert sources == [["import torch\n"], ["x = 1\n"], ["y = 2\n", "z = 3"]]
    assert _check(tmp_path, "--extend-select", "unused-suppression", "d.ipynb").returncode == 0


def test_a_line_removed_before_a_magic_and_in_a_cell_with_crlf_line_breaks(tmp_path: Path) -> None:
    text = _notebook(("code", "x = 1\n"), ("code", "# precisionlint: disable[PL101]\n!nvidia-smi"),
                     ("code", "y = 2\r\n# precisionlint: disable[PL102]\r\nz = 3\r\n"))
    path = tmp_path / "e.ipynb"
    path.write_text(text)
    _check(tmp_path, "--extend-select", "unused-suppression", "--fix", "e.ipynb")
    sources = [c["source"] for c in json.loads(path.read_text())["cells"]]
    assert sources == [["x = 1\n"], ["!nvidia-smi"], ["y = 2\r\n", "z = 3\r\n"]]


def test_a_fix_that_cannot_be_mapped_to_one_cell_is_withdrawn_with_the_reason() -> None:
    """A fix whose edit spans two cells, or touches a line of IPython syntax, is not written into the
    notebook: the finding keeps no fix and says why, in one line."""
    from precisionlint.core.model import Edit, Finding, Fix, Severity, Span

    document = load_document("train.ipynb", NOTEBOOK, "notebook")
    program = document.text
    across = Edit(program.index("GradScaler\n"), program.index("scaler ="), "x")
    magic = Edit(0, 4, "import os")
    remap = document.remap_findings
    assert remap is not None
    found = remap([Finding("PL207", "deprecated-amp-api", Severity.WARNING, "train.ipynb", Span(4, 1, 4, 5), "m",
                           fix=Fix("d", "safe", (edit,))) for edit in (across, magic)])
    assert [f.fix for f in found] == [None, None]
    assert found[0].message == "m (no fix in this notebook: it spans cells 1 and 3)"
    assert found[1].message == ("m (no fix in this notebook: it touches line 1 of cell 1, which is IPython syntax, "
                                "not Python)")


def test_a_fix_that_breaks_a_cell_is_refused(tmp_path: Path) -> None:
    from precisionlint.sources.notebook_edits import verify

    broken = NOTEBOOK.replace("import torch\\n", "import (torch\\n")
    assert verify(NOTEBOOK, broken) == "the fixed code would not parse"
    outputs = NOTEBOOK.replace('"hi\\n"', '"bye\\n"')
    assert verify(NOTEBOOK, outputs) == "the fixed notebook would change more than code"
    changed = NOTEBOOK.replace('"python3"', '"python2"')
    assert verify(NOTEBOOK, changed) == "the fixed notebook would change its metadata"


def test_a_cell_that_is_not_python_is_skipped_not_reported() -> None:
    broken = _notebook(("code", "import torch\n"), ("code", "!pip install \\\n    torch\nx = (1,\n"),
                       ("code", "await main()\nscaler = torch.cuda.amp.GradScaler()\n"))
    document = load_document("broken.ipynb", broken, "notebook")
    assert document.text.splitlines() == ["import torch", "pass", "", "", "await main()",
                                          "scaler = torch.cuda.amp.GradScaler()"]


def test_a_statement_split_across_cells_is_not_read_as_one() -> None:
    """IPython compiles each cell alone. Cells that parse only together (a block opened in one cell and its
    body in the next, a decorator above the cell of its function, a call continued into the next cell) are not
    Python one by one: each such cell is skipped, even though the joined program parses."""
    split = _notebook(("code", "import torch\nif torch.cuda.is_available():\n"), ("code", "    x = 1\n"),
                      ("code", "@torch.no_grad()\n"), ("code", "def f():\n    return 1\n"),
                      ("code", "y = max(1,\n"), ("code", "        2)\nz = 3\n"))
    document = load_document("split.ipynb", split, "notebook")
    assert document.text.splitlines() == ["pass", "", "pass", "pass", "def f():", "    return 1", "pass", "pass", ""]
    whole = _notebook(("code", "import torch\n\n"), ("code", "# a comment\n"),
                      ("code", "@torch.no_grad()\ndef f():\n    return 1\nscaler = torch.amp.GradScaler()\n"))
    document = load_document("whole.ipynb", whole, "notebook")
    assert document.text.splitlines() == ["import torch", "", "# a comment", "@torch.no_grad()", "def f():",
                                          "    return 1", "scaler = torch.amp.GradScaler()"]


# Whole top-level statements, each one or more lines; a notebook is some of them, cut into cells anywhere.
_STATEMENTS = [["import torch"], ["if torch.cuda.is_available():", "    x = 1", "else:", "    x = 2"],
               ["@torch.no_grad()", "def f():", "    return (1,", "            2)"], ["y = max(1,", "        2)"],
               ["# a comment"], [""], ["scaler = torch.amp.GradScaler()"], ["z = 3 + \\", "    4"],
               ["class A:", "    pass"], ["    w = 5"], ["s = \"\"\"a", "b\"\"\""]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=8), st.lists(st.integers(1, 30), max_size=6))
def test_each_cell_is_kept_exactly_when_it_parses_alone(statements: list[list[str]], cuts: list[int]) -> None:
    """Whatever the cells, the program holds a cell's lines when that cell parses on its own and `pass` lines
    in its place otherwise: what one parse of the whole notebook decides must be what parsing each cell does
    (the statements here parse together, except an indented one, and the cuts fall inside them too)."""
    import ast

    lines = [line for statement in statements for line in statement]
    points = sorted({cut for cut in cuts if cut < len(lines)})
    cells = [lines[a:b] for a, b in zip([0, *points], [*points, len(lines)], strict=True)]
    expected: list[str] = []
    for cell in cells:
        try:
            ast.parse("\n".join(cell))
            expected.extend(cell)
        except SyntaxError:
            expected.extend(["pass"] + [""] * (len(cell) - 1))
    notebook = _notebook(*(("code", "\n".join(cell) + "\n") for cell in cells))
    document = load_document("cells.ipynb", notebook, "notebook")
    assert document.text.splitlines() == expected


def test_not_a_notebook_is_a_parse_error(tmp_path: Path) -> None:
    (tmp_path / "x.ipynb").write_text("{autocast: not json")
    result = _check(tmp_path, "x.ipynb")
    assert result.returncode == 1 and "x.ipynb:1:2: PL001" in result.stdout and "not a notebook" in result.stdout


def test_a_notebook_heavy_with_outputs_is_checked_not_refused_for_memory(tmp_path: Path) -> None:
    # Outputs (here 4 MB of base64-like image data) are kept as a few large strings and never analysed: the
    # memory estimate must not treat them like config text (which refused such notebooks as limit-exceeded).
    code = "import torch\nfrom torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
    data = json.loads(_notebook(("code", code)))
    data["cells"][0]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                    "data": {"image/png": "iVBORw0KGgo" * 400_000}}]
    (tmp_path / "plots.ipynb").write_text(json.dumps(data), encoding="utf-8")
    result = _check(tmp_path, "--output-format", "json", "plots.ipynb")
    codes = [finding["code"] for finding in json.loads(result.stdout)]
    assert "PL003" not in codes
    assert "PL207" in codes, result.stdout


# --- property: any notebook, any fix -----------------------------------------------------------------------

_LINES = [
    "import torch", "from torch.cuda.amp import GradScaler, autocast", "scaler = torch.cuda.amp.GradScaler()",
    "with torch.cuda.amp.autocast(dtype=torch.float16):", "    y = model('é ✓')", "scaler = GradScaler()",
    "with autocast():", "    pass", "%time x = 1", "!nvidia-smi", "model?", "# precisionlint: disable[PL101]",
    "x = 1  # precisionlint: ignore[PL102]", "torch.backends.cuda.matmul.allow_tf32 = True", "", "def f(:",
    "from lightning import Trainer", "Trainer(precision=16)", "\ttab = '\\u2028'",
]


def _cells() -> st.SearchStrategy[list[tuple[list[str], bool, str]]]:
    cell = st.tuples(st.lists(st.sampled_from(_LINES), min_size=0, max_size=6), st.booleans(),
                     st.sampled_from(["\n", "\r\n"]))
    return st.lists(cell, min_size=1, max_size=4)


@settings(max_examples=int(os.environ.get("PRECISIONLINT_FUZZ_EXAMPLES", "0")) or 60, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(_cells(), st.sampled_from([None, 1, 2, "\t"]), st.booleans(), st.booleans())
def test_any_fix_leaves_the_notebook_but_its_sources_as_it_was(cells, indent, ascii_only, final) -> None:
    """Whatever the cells hold and however the JSON is written, fixing (unsafe fixes included) changes only
    code cells' sources, keeps the file valid JSON, and leaves every cell that changed still Python."""
    from precisionlint.checks import all_rules
    from precisionlint.engine.options import EngineOptions
    from precisionlint.fix.apply import fix_text
    from precisionlint.sources.notebook_edits import verify

    notebook = {"cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {"n": number}, "outputs": [{"text": "ö"}],
         "source": (lambda text: text.splitlines(keepends=True) if as_list else text)(ending.join(lines))}
        for number, (lines, as_list, ending) in enumerate(cells)
    ] + [{"cell_type": "markdown", "metadata": {}, "source": "import torch.cuda.amp"}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=indent, ensure_ascii=ascii_only) + ("\n" if final else "")
    result = fix_text("fuzz.ipynb", text, "notebook", EngineOptions(rules=all_rules()), unsafe=True)
    if result.new_text != text:
        assert verify(text, result.new_text) is None
        assert result.new_text.endswith("\n") == final
    assert not result.internal_error and not [f for f in result.findings if f.code == "PL009"], result.findings


def test_the_editor_positions_of_a_cell_s_characters_come_from_the_reader_of_fixes() -> None:
    # The language server places a finding inside the .ipynb text through the same reading of the source
    # strings that writes fixes back: each character of a code cell maps to the character or escape in the
    # file that decodes to it, for a source written as one string, as a list, with \u escapes (a surrogate
    # pair is one character), and as a list with an item that is not a string (the reader passes over it).
    from precisionlint.server.notebooks import cell_offset, code_cells

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# title\n"},
        {"cell_type": "code", "metadata": {}, "source": 'x = "caf\u00e9 \U0001F600"\n\ty = 1\n'},
        {"cell_type": "code", "metadata": {}, "source": ["a = 1\n", "b = '\\t'\n", "c = 2"]},
        {"cell_type": "code", "metadata": {}, "source": ["d = 1\n", 7, "e = 2\n"]},
        {"cell_type": "code", "metadata": {}, "source": []},
    ]
    for ensure_ascii in (True, False):
        text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                          indent=1, ensure_ascii=ensure_ascii)
        found = code_cells(text)
        assert found is not None and sorted(found) == [1, 2, 3, 4]
        joined = [c["source"] if isinstance(c["source"], str)
                  else "".join(part for part in c["source"] if isinstance(part, str))
                  for c in cells if c["cell_type"] == "code"]
        for number, source in enumerate(joined, start=1):
            cell = found[number]
            assert cell.text == source
            assert len(cell.offsets) == len(source)
            for index, char in enumerate(source):
                at = cell.offsets[index]
                raw = text[at:at + 12]
                if raw.startswith("\\u"):
                    escape = raw if 0xD800 <= int(raw[2:6], 16) < 0xDC00 else raw[:6]  # a surrogate pair: 12
                else:
                    escape = raw[:2] if raw[0] == "\\" else raw[0]
                assert json.loads(f'"{escape}"') == char, (number, index, raw)
        # (line 2, column 2) of cell 1 is `y`, after a tab written as an escape
        assert text[cell_offset(found[1], 2, 2)] == "y"
        assert found[4].text == "" and found[4].offsets == []
    assert code_cells("not json") is None
    assert code_cells('{"cells": 3}') is None
