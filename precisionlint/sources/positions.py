"""Positions of Python AST nodes as character offsets.

`ast` reports columns as UTF-8 byte offsets; spans and edits in precisionlint are in characters, so every
conversion goes through here (a line with non-ASCII text before a node would otherwise be off).
"""

from __future__ import annotations

import ast

from precisionlint.core.lines import universal_line_starts
from precisionlint.core.model import Document, Span


def use_universal_newlines(document: Document) -> None:
    """Make the document's lines those its parser counted, for files with old-Mac or mixed line endings, so
    that parser line numbers index `line_starts` and spans land where the parser saw the node."""
    if "\r" in document.text:
        document.line_starts = universal_line_starts(document.text)


def _char_offset(document: Document, line: int, byte_col: int) -> int:
    starts = document.line_starts
    if line > len(starts):  # a position past the last line (never for a Document from python_source)
        return len(document.text)
    start = starts[max(line, 1) - 1]
    line_text = document.text[start : start + byte_col + 1]
    if line_text.isascii():
        return min(start + byte_col, len(document.text))
    encoded = document.text[start : starts[line] if line < len(starts) else None]
    return start + len(encoded.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def node_offsets(document: Document, node: ast.AST) -> tuple[int, int]:
    start = _char_offset(document, node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    end_col = getattr(node, "end_col_offset", None)
    end = _char_offset(document, end_line, end_col) if end_col is not None else start + 1
    return start, end


def node_span(document: Document, node: ast.AST) -> Span:
    start, end = node_offsets(document, node)
    return document.span_of(start, end)
