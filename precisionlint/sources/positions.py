"""Positions of Python AST nodes as character offsets.

`ast` reports columns as UTF-8 byte offsets; spans and edits in precisionlint are in characters, so every
conversion goes through here (a line with non-ASCII text before a node would otherwise be off); the arithmetic
is core/lines.byte_offset.
"""

from __future__ import annotations

import ast

from precisionlint.core.lines import byte_offset, parser_line_starts
from precisionlint.core.model import Document, Span


def use_universal_newlines(document: Document) -> None:
    """Make the document's lines those its parser counted, for files with old-Mac or mixed line endings, so
    that parser line numbers index `line_starts` and spans land where the parser saw the node."""
    if "\r" in document.text:
        document.line_starts = parser_line_starts(document.text, "python")


def node_offsets(document: Document, node: ast.AST) -> tuple[int, int]:
    text, starts = document.text, document.line_starts
    start = byte_offset(text, starts, node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    end_col = getattr(node, "end_col_offset", None)
    end = byte_offset(text, starts, end_line, end_col) if end_col is not None else start + 1
    return start, end


def node_span(document: Document, node: ast.AST) -> Span:
    start, end = node_offsets(document, node)
    return document.span_of(start, end)
