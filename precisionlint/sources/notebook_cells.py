"""A notebook code cell's lines as the Python they run: IPython lines (`%magic`, `!shell`, `x = !cmd`, `obj?`)
become `pass`, a cell magic (`%%bash`) makes the whole cell `pass`. Used by the loader (notebook_source.py) and
by the check that a fixed cell still parses (notebook_edits.py)."""

from __future__ import annotations

import ast
import re
import warnings

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_MAGIC = re.compile(r"^(\s*)(?:[%!]|[\w.\[\], ]+=\s*[%!])")
_HELP = re.compile(r"^(\s*)[\w.]+\?\??\s*$")


def cell_lines(source: Any) -> list[str]:
    if isinstance(source, list):
        text = "".join(part for part in source if isinstance(part, str))
    elif isinstance(source, str):
        text = source
    else:
        return []
    lines = text.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return ["pass" if i == 0 else "" for i in range(len(lines))]  # a cell magic: the cell is not Python
    out = []
    continued = False
    for line in lines:
        match = _MAGIC.match(line) or _HELP.match(line)
        if match and not continued:
            out.append(f"{match.group(1)}pass")
        else:
            out.append(line)
        continued = line.rstrip().endswith("\\")
    return out


def parses(lines: list[str]) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
