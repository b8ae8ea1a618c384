"""Fixes in notebooks: edits of the joined cell program become edits of the notebook's JSON text, in place.

A rule's fix edits the Python program that the code cells make together (notebook_source). To write it back,
each edit is mapped to its cell, then to the characters of that cell's `source` string literal(s) inside the
JSON text, and the replacement is written JSON-escaped. Nothing else in the file changes: outputs, metadata,
cell ids, key order, indentation, escaping style and the trailing newline are the bytes they were, because the
rest of the text is never re-serialized (ruff and nbQA re-dump the whole notebook with their own JSON
settings instead). In a `source` list (one string per line, as Jupyter writes it), a replacement that adds
lines adds list items with the list's own separator, so the one-line-per-item layout stays.

An edit is mapped only when it lies inside one cell, on lines that the program holds exactly as the cell does
(not an IPython line replaced by `pass`, not a cell skipped because it is not Python); otherwise the fix is
withdrawn and the finding says why, in one line. The verifier (verify) proves a fixed notebook is the old one
except the edited sources, and that each edited cell still parses.
"""

from __future__ import annotations

import json
import re

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Edit, Fix
from precisionlint.core.records import ValueRecord

if TYPE_CHECKING:
    from typing import Any

# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers).


class CodeCell(ValueRecord):
    """One code cell as the joined program holds it."""

    __slots__ = ("number", "index", "start", "source", "exact", "line_starts")
    _fields = __slots__

    def __init__(self, number: int, index: int, start: int, source: str, exact: list[bool] | None = None,
                 line_starts: list[int] | None = None) -> None:
        self.number = number  # among the code cells, from 1 (what findings show)
        self.index = index  # in the notebook's "cells" list
        self.start = start  # its first line in the program, 1-based
        self.source = source  # the cell's source as Jupyter joins it
        self.exact: list[bool] = [] if exact is None else exact  # per line: the program holds the cell's own text
        self.line_starts: list[int] = [] if line_starts is None else line_starts  # offset in `source` of each line


class Unmappable(Exception):  # noqa: N818 - a reason for the user, not a failure
    """Why a fix cannot be written into the notebook (one line, for the finding's message)."""


def cell_of(cells: list[CodeCell], line: int) -> CodeCell | None:
    for cell in reversed(cells):
        if cell.start <= line < cell.start + max(1, len(cell.exact)):
            return cell
    return None


def _source_offset(cell: CodeCell, program_line: int, column: int, end: bool = False) -> int:
    """The offset in the cell's source of a program position; an edit's (exclusive) end at the start of a
    line touches nothing of that line, which may then be anything."""
    index = program_line - cell.start
    if not 0 <= index < len(cell.exact):
        raise Unmappable(f"it reaches past cell {cell.number}")
    if end and column == 1:
        return cell.line_starts[index]
    if not cell.exact[index]:
        raise Unmappable(f"it touches line {index + 1} of cell {cell.number}, which is IPython syntax, not Python")
    return cell.line_starts[index] + column - 1


class _Literal(ValueRecord):
    __slots__ = ("start", "end", "decoded_start", "text")
    _fields = __slots__

    def __init__(self, start: int, end: int, decoded_start: int, text: str) -> None:
        self.start = start  # offset of the opening quote in the JSON text
        self.end = end  # offset after the closing quote
        self.decoded_start = decoded_start  # offset in the cell source of its first character
        self.text = text  # decoded


class NotebookText:
    """The notebook's JSON text with the positions of every code cell's source literals, read once, when the
    first fix is mapped (a notebook without fixes never pays for it) or when the language server places a
    finding inside the file's text (server/notebooks.py)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._sources: dict[int, tuple[str, list[_Literal], str]] | None = None

    def sources(self) -> dict[int, tuple[str, list[_Literal], str]]:
        """cell index -> (kind "str" | "list" | "mixed" (a list with items that are not strings), its string
        literals, the separator between list items)."""
        if self._sources is None:
            from precisionlint.sources import Limits
            from precisionlint.sources.json_source import parse_positions
            from precisionlint.sources.tree import NodeBudget

            limits = Limits()
            root = parse_positions(self.text, NodeBudget(limits.max_nodes * 4, limits.max_depth))
            found: dict[int, tuple[str, list[_Literal], str]] = {}
            cells = root.get("cells") if root.kind == "map" else None
            items = cells.value.items if cells is not None and cells.value.kind == "seq" else []
            for index, node in enumerate(items):
                entry = node.get("source") if node.kind == "map" else None
                if entry is None:
                    continue
                value = entry.value
                if value.kind == "scalar" and isinstance(value.value, str):
                    found[index] = ("str", [_Literal(value.start, value.end, 0, value.value)], "")
                elif value.kind == "seq":
                    literals, offset = [], 0
                    strings = [i for i in value.items if i.kind == "scalar" and isinstance(i.value, str)]
                    for item in strings:  # the reader joins the strings and passes over anything else
                        literals.append(_Literal(item.start, item.end, offset, item.value))
                        offset += len(item.value)
                    kind = "list" if len(strings) == len(value.items) else "mixed"
                    found[index] = (kind, literals, self._separator(value.items))
            self._sources = found
        return self._sources

    def characters(self, index: int) -> tuple[str, list[int], int] | None:
        """The source of cell `index` (of the "cells" list) as the reader joins it, the offset in the JSON text
        of the character or escape that each of its characters is decoded from, and the offset of the closing
        quote of its last string (0 for an empty list); None when it is not written as text. SourceError or
        LimitError when the text cannot be read, Unmappable when a string cannot be read back."""
        found = self.sources().get(index)
        if found is None:
            return None
        literals = found[1]
        offsets = [literal.start + raw for literal in literals for raw in _raw_offsets(self.text, literal)[:-1]]
        return "".join(literal.text for literal in literals), offsets, literals[-1].end - 1 if literals else 0

    def _separator(self, items: list[Any]) -> str:
        if len(items) >= 2:
            return self.text[items[0].end:items[1].start]
        if not items:
            return ",\n"
        line_start = self.text.rfind("\n", 0, items[0].start) + 1
        indent = self.text[line_start:items[0].start]
        return ",\n" + (indent if not indent.strip() else " ")

    def edit(self, cell: CodeCell, start: int, end: int, replacement: str) -> Edit:
        """The edit of the JSON text that replaces characters [start, end) of the cell's source."""
        found = self.sources().get(cell.index)
        if found is None or found[0] == "mixed":
            raise Unmappable(f"the source of cell {cell.number} is not written as text")
        kind, literals, separator = found
        total = sum(len(lit.text) for lit in literals)
        if "".join(lit.text for lit in literals) != cell.source or not 0 <= start <= end <= total:
            raise Unmappable(f"the source of cell {cell.number} could not be located")
        first = _literal_at(literals, start, at_end=False)
        last = first if end == start else _literal_at(literals, end, at_end=True)
        raw_start = first.start + _raw_offsets(self.text, first)[start - first.decoded_start]
        raw_end = last.start + _raw_offsets(self.text, last)[end - last.decoded_start]
        if kind == "list":
            whole = (replacement == "" and start == first.decoded_start
                     and end == last.decoded_start + len(last.text) and len(literals) > 1)
            if whole:  # whole lines removed: their list items go, with one separator
                position = literals.index(first)
                after = literals.index(last)
                if position > 0:
                    return Edit(literals[position - 1].end, last.end, "")
                return Edit(first.start, literals[after + 1].start if after + 1 < len(literals) else last.end, "")
            return Edit(raw_start, raw_end, _escape_lines(replacement, separator,
                                                          end == last.decoded_start + len(last.text)))
        return Edit(raw_start, raw_end, _escape(replacement))


def _literal_at(literals: list[_Literal], offset: int, at_end: bool) -> _Literal:
    """The literal holding source offset `offset`: for a start, the one it begins in (the next one at a
    boundary); for an end, the one it ends in (the previous one at a boundary)."""
    for literal in literals:
        low, high = literal.decoded_start, literal.decoded_start + len(literal.text)
        if (low < offset <= high) if at_end else (low <= offset < high):
            return literal
    return literals[-1] if offset > 0 or not at_end else literals[0]


# The line breaks str.splitlines() knows: the program joins a cell's lines with "\n" whichever of them it had.
_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _raw_offsets(text: str, literal: _Literal) -> list[int]:
    """For each decoded character index (and one past the end) its offset in the raw literal (from the
    opening quote)."""
    raw = text[literal.start:literal.end]
    offsets: list[int] = []
    position = 1  # after the opening quote
    while position < len(raw) - 1:
        offsets.append(position)
        if raw[position] == "\\":
            if raw[position + 1] == "u":
                code = int(raw[position + 2:position + 6], 16)
                position += 6
                if 0xD800 <= code < 0xDC00 and raw.startswith("\\u", position):
                    low = int(raw[position + 2:position + 6], 16)
                    if 0xDC00 <= low < 0xE000:
                        position += 6  # a surrogate pair is one character once decoded
            else:
                position += 2
        else:
            position += 1
    offsets.append(position)
    if len(offsets) != len(literal.text) + 1:
        raise Unmappable("a source string could not be read back")
    return offsets


def _escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _escape_lines(text: str, separator: str, ends_item: bool) -> str:
    """A replacement inside a source list: each line it completes closes its item, and the next line opens
    a new one (the list's own separator between them). A final line break closes the item only where the
    original item also ended there."""
    parts = text.split("\n")
    out = []
    for number, part in enumerate(parts):
        last = number == len(parts) - 1
        if last:
            out.append(_escape(part))
            break
        out.append(_escape(part + "\n"))
        if number == len(parts) - 2 and parts[-1] == "" and ends_item:
            break  # the replacement ends the item where the old text did: the next item follows as it was
        out.append('"' + separator + '"')
    return "".join(out)


def map_fix(fix: Fix, cells: list[CodeCell], notebook: NotebookText, position: Any, program: str) -> Fix:
    """The fix with its edits moved from the program into the notebook's JSON text; Unmappable when one
    cannot be (`position` turns a program offset into a 1-based (line, column))."""
    edits = []
    for edit in fix.edits:
        start_line, start_column = position(edit.start)
        end_line, end_column = position(edit.end)
        cell = cell_of(cells, start_line)
        if cell is None:
            raise Unmappable("it is outside the code cells")
        start = _source_offset(cell, start_line, start_column)
        removed = program[edit.start:edit.end]
        if edit.end == edit.start:
            end = start
        elif end_column == 1 and end_line == cell.start + len(cell.exact):
            # The edit takes the cell's last line with its line break: in the program that break joins this
            # cell to the next one; in the cell it is the end of the source (with no break, as Jupyter saves).
            end = len(cell.source)
            if not cell.source.endswith(("\n", "\r")) and removed.endswith("\n"):
                removed = removed[:-1]
        else:
            end_cell = cell_of(cells, end_line)
            if end_cell is None:
                raise Unmappable("it is outside the code cells")
            if end_cell is not cell:
                raise Unmappable(f"it spans cells {cell.number} and {end_cell.number}")
            end = _source_offset(cell, end_line, end_column, end=True)
        # Every line it touches must be the cell's own text (an end at column 1 touches nothing of its line).
        last_line = min(end_line - (end_column == 1 and end_line > start_line), cell.start + len(cell.exact) - 1)
        for line in range(start_line, last_line + 1):
            _source_offset(cell, line, 1)
        if _BREAKS.split(cell.source[start:end]) != removed.split("\n"):
            raise Unmappable(f"the text of cell {cell.number} differs from what the fix was computed on")
        replacement = edit.replacement
        if "\r\n" in cell.source and "\n" in replacement:  # new lines keep the cell's own line breaks
            replacement = replacement.replace("\r\n", "\n").replace("\n", "\r\n")
        edits.append(notebook.edit(cell, start, end, replacement))
    return Fix(fix.description, fix.applicability, tuple(edits))


def verify(old_text: str, new_text: str) -> str | None:
    """None when `new_text` is the notebook `old_text` with only code cell sources changed, each of them
    still Python; else why not, in words for the user."""
    from precisionlint.sources.notebook_cells import cell_lines, parses

    try:
        old, new = json.loads(old_text), json.loads(new_text)
    except ValueError:
        return "the fixed notebook would not be valid JSON"
    old_cells, new_cells = old.get("cells"), new.get("cells")
    if not isinstance(old_cells, list) or not isinstance(new_cells, list) or len(old_cells) != len(new_cells):
        return "the fixed notebook would change its cells"
    if {k: v for k, v in old.items() if k != "cells"} != {k: v for k, v in new.items() if k != "cells"}:
        return "the fixed notebook would change its metadata"
    for before, after in zip(old_cells, new_cells, strict=True):
        if not isinstance(after, dict) or not isinstance(before, dict):
            return "the fixed notebook would change its cells"
        rest_before = {k: v for k, v in before.items() if k != "source"}
        rest_after = {k: v for k, v in after.items() if k != "source"}
        if rest_before != rest_after:
            return "the fixed notebook would change more than code"
        if before.get("source") == after.get("source"):
            continue
        if before.get("cell_type") != "code" or _joined(after.get("source")) is None:
            return "the fixed notebook would change more than code"
        if not parses(cell_lines(after.get("source"))):
            return "the fixed code would not parse"
    return None


def _joined(source: Any) -> str | None:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    return None


def cell_diff(display: str, old_text: str, new_text: str) -> str:
    """A unified diff per changed code cell (`--- a/train.ipynb:cell 3`), as ruff shows notebook fixes;
    "" when no source changed."""
    import difflib

    try:
        old, new = json.loads(old_text), json.loads(new_text)
    except ValueError:
        return ""
    name = display[2:] if display.startswith("./") else display.lstrip("/")
    out: list[str] = []
    number = 0
    for before, after in zip(old.get("cells", []), new.get("cells", []), strict=False):
        if not isinstance(before, dict) or before.get("cell_type") != "code":
            continue
        number += 1
        old_source = _joined(before.get("source")) or ""
        new_source = _joined(after.get("source") if isinstance(after, dict) else None) or ""
        if old_source == new_source:
            continue
        lines = difflib.unified_diff(_lines(old_source), _lines(new_source), fromfile=f"a/{name}:cell {number}",
                                     tofile=f"b/{name}:cell {number}")
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result
