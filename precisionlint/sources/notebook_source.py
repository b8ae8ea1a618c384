"""Jupyter notebooks (`*.ipynb`): the code cells checked as one Python program, in cell order.

Each code cell's source is joined in order (a cell always ends its last line), so names defined in one cell are
known in the next, as when the notebook runs top to bottom. IPython syntax is not Python: a line magic or shell
escape (`%pip install ...`, `!nvidia-smi`, `x = !ls`), a help request (`obj?`) and a whole cell magic
(`%%bash`, `%%time`) become `pass` lines with the same indentation, so line numbers keep their place.
Markdown and raw cells, outputs and metadata are never read.

A cell that still does not parse as Python is skipped (IPython accepts more than this reader models), so a
notebook is never reported as broken for syntax Jupyter runs.

Findings are reported the way ruff reports notebooks: at the cell and the line inside it
(`train.ipynb:cell 3:2:5`, counting code cells from 1). Fixes are written back into the cells' `source`
strings of the JSON text in place, nothing else touched (notebook_edits); a fix that cannot be mapped to the
cells (it spans two cells, or touches an IPython line) is withdrawn, and the finding says why.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import warnings

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Finding, Span
from precisionlint.sources import LimitError, Limits, SourceError
from precisionlint.sources.notebook_cells import cell_lines, parses
from precisionlint.sources.notebook_edits import CodeCell, NotebookText, Unmappable, map_fix

if TYPE_CHECKING:
    from typing import Any


def _parsed_whole(program: list[str], starts: list[int]) -> ast.Module | None:
    """The joined program's tree when every cell parses on its own, known from one parse of the whole: each
    top-level statement (with its decorators) lies inside one cell, so each cell holds whole statements, which
    parse alone as they parse together. None when the whole does not parse or a statement spans two cells
    (then each cell is tried alone, as IPython compiles it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse("\n".join(program) + ("\n" if program else ""), type_comments=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for statement in tree.body:
        first = statement.lineno
        for decorator in getattr(statement, "decorator_list", ()):
            first = min(first, decorator.lineno)
        last = statement.end_lineno or first
        if bisect.bisect_right(starts, first) != bisect.bisect_right(starts, last):
            return None
    return tree


def load(path: str, text: str, limits: Limits) -> Document:
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", 1)
        column = getattr(exc, "colno", 1)
        raise SourceError(f"not a notebook: invalid JSON ({getattr(exc, 'msg', exc)})", line, column) from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise SourceError("not a notebook: no \"cells\" list", 1, 1)
    found: list[tuple[int, int, Any, list[str]]] = []  # (number, index, source, lines) of each code cell
    number = 0
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        number += 1
        lines = cell_lines(cell.get("source", ""))
        if lines:
            found.append((number, index, cell.get("source", ""), lines))
    starts: list[int] = []  # first line (1-based) of each code cell in the joined program
    numbers: list[int] = []  # its number among the code cells, from 1
    program: list[str] = []
    for number, _, _, lines in found:
        starts.append(len(program) + 1)
        numbers.append(number)
        program.extend(lines)
    tree = _parsed_whole(program, starts)
    skipped = [False] * len(found)
    if tree is None:
        # Some cell may not parse on its own: each is tried alone, as IPython compiles it.
        program = []
        for position, (_, _, _, lines) in enumerate(found):
            if not parses(lines):
                # IPython syntax this reader does not model (a multi-line shell escape, a cell left
                # half-written): the cell is skipped rather than reported against the user.
                skipped[position] = True
                lines = ["pass"] + [""] * (len(lines) - 1)
            program.extend(lines)
    code_cells: list[CodeCell] = []  # where each cell's lines are, for writing fixes back
    for position, (number, index, cell_source, lines) in enumerate(found):
        start = starts[position]
        if skipped[position]:
            lines = program[start - 1:start - 1 + len(lines)]
        code_cells.append(_code_cell(number, index, start, cell_source, lines, skipped[position]))
    source = "\n".join(program) + ("\n" if program else "")
    from precisionlint.sources.python_source import load as load_python

    def where(line: int) -> tuple[int, int]:
        index = max(0, bisect.bisect_right(starts, line) - 1)
        if not starts:
            return 1, line
        return numbers[index], line - starts[index] + 1

    try:
        document = load_python(path, source, limits, tree)
    except SourceError as exc:
        cell, line = where(exc.line)
        raise SourceError(f"cell {cell}: {exc.message}", line, exc.column) from None

    def cell_line(match: re.Match[str]) -> str:
        cell, line = where(int(match.group(1)))
        return f"cell {cell}, line {line}"

    notebook = NotebookText(text)

    def remap(findings: list[Finding]) -> list[Finding]:
        out = []
        for finding in findings:
            message = re.sub(r"\bline (\d+)", cell_line, finding.message)  # "(line 8)" in the joined program
            cell, line = where(finding.span.line)
            end_cell, end_line = where(finding.span.end_line)
            if end_cell != cell:
                end_line, end_column = line, finding.span.column + 1
            else:
                end_column = finding.span.end_column
            fix = None
            if finding.fix is not None and finding.fix.edits:
                try:
                    fix = map_fix(finding.fix, code_cells, notebook, document.position, document.text)
                except Unmappable as reason:
                    message += f" (no fix in this notebook: {reason})"
                except LimitError:
                    message += " (no fix in this notebook: it is too large to edit in place)"
                except SourceError:
                    message += " (no fix in this notebook: its JSON could not be read for editing)"
            out.append(finding._replace(span=Span(line, finding.span.column, end_line, end_column), fix=fix,
                                        cell=cell, message=message))
        return out

    document.remap_findings = remap
    # What `check --fix` edits and verifies: the notebook's JSON text, not the program of its cells.
    document.fix_document = Document(path, text, "notebook")
    return document


def _code_cell(number: int, index: int, start: int, source: Any, program_lines: list[str],
               skipped: bool) -> CodeCell:
    """Where the cell's lines are in its source, and which of them the program holds as written (a line
    of IPython syntax became `pass`; a cell that is not Python holds none of its lines)."""
    joined = "".join(p for p in source if isinstance(p, str)) if isinstance(source, list) else str(source)
    originals = joined.splitlines(keepends=True)
    line_starts, offset = [], 0
    for original in originals:
        line_starts.append(offset)
        offset += len(original)
    exact = [not skipped and original.splitlines() == [line]
             for line, original in zip(program_lines, originals, strict=False)]
    return CodeCell(number, index, start, joined, exact, line_starts)
