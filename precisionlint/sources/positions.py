"""Positions of Python AST nodes as character offsets.

`ast` reports columns as UTF-8 byte offsets; spans and edits in precisionlint are in characters, so every
conversion goes through here (a line with non-ASCII text before a node would otherwise be off).
"""

from __future__ import annotations

import ast

from precisionlint.model import Document, Span


def _char_offset(document: Document, line: int, byte_col: int) -> int:
    start = document.line_starts[line - 1]
    line_text = document.text[start : start + byte_col + 1]
    if line_text.isascii():
        return start + byte_col
    encoded = document.text[start : document.line_starts[line] if line < len(document.line_starts) else None]
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
