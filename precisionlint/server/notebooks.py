"""Notebooks in the editor: where a finding at (code cell, line, column) is in what the editor shows.

`check` reports a notebook's findings by code cell and line inside it, as ruff does (`train.ipynb:cell 3:2:5`).
An editor shows a notebook one of two ways:

- as notebook cells (VS Code's notebook editor, through the protocol's notebook synchronization): each cell is
  its own text document, so a finding goes to the k-th code cell's document at its line and column there;
- as the `.ipynb` file's JSON text (any editor opening the file as text): a finding goes where its cell line is
  written inside the cell's `"source"` strings, escapes and all.

Either way the notebook is checked by `check`'s own notebook reader, so the findings are the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import NamedTuple

from precisionlint.core.model import Finding
from precisionlint.sources import LimitError, SourceError
from precisionlint.sources.notebook_edits import NotebookText, Unmappable

# A cell that does not parse is reported as "cell 3: <error>" with the line counted inside that cell.
_CELL_ERROR = re.compile(r"^cell (\d+): ")


def notebook_json(cells: Sequence[tuple[bool, str]]) -> str:
    """The `.ipynb` text of cells given as (is_code, source): what the notebook reader reads of a file."""
    return json.dumps({
        "cells": [{"cell_type": "code" if code else "markdown", "metadata": {}, "source": source}
                  for code, source in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


def cell_of(finding: Finding) -> int | None:
    """The code cell (from 1) whose lines the finding's span counts, or None for a position in the file."""
    if finding.cell is not None:
        return finding.cell
    match = _CELL_ERROR.match(finding.message)
    return int(match.group(1)) if match else None


# ---------------------------------------------------------------------------------------------------------------
# Positions inside the .ipynb JSON text
# ---------------------------------------------------------------------------------------------------------------


class CellText(NamedTuple):
    """One code cell's source as the reader joins it, and where each of its characters is written in the file
    (`offsets[i]`: the file offset of the escape or character that decodes to character i)."""

    text: str
    offsets: list[int]
    end: int  # the file offset of the closing quote of the cell's last source string (for positions past its end)


def code_cells(text: str) -> dict[int, CellText] | None:
    """The code cells of an `.ipynb` text by their number among code cells (from 1), as the notebook reader
    counts them; None when the text is not a notebook's JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None
    notebook = NotebookText(text)  # the reader that writes fixes back into the file: one view of its strings
    result: dict[int, CellText] = {}
    number = 0
    try:
        for index, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            number += 1
            result[number] = CellText(*(notebook.characters(index) or ("", [], 0)))
    except (SourceError, LimitError, Unmappable):
        return None
    return result


def cell_offset(cell: CellText, line: int, column: int) -> int:
    """The file offset of 1-based (line, column) inside a cell, counted as the reader counts the cell's lines
    (`str.splitlines`); clamped to the cell."""
    lines = cell.text.splitlines(keepends=True)
    index = min(max(line - 1, 0), max(len(lines) - 1, 0))
    start = sum(len(part) for part in lines[:index])
    length = len(lines[index].splitlines()[0]) if lines and lines[index].splitlines() else 0
    at = start + min(max(column - 1, 0), length)
    return cell.offsets[at] if at < len(cell.offsets) else cell.end
