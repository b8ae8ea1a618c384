"""Positions of `ast` nodes in the document's character coordinates.

`ast` reports `col_offset` / `end_col_offset` as UTF-8 *byte* offsets into the line, while Span columns and
Edit offsets are *characters* of the decoded text. They differ on any line with a non-ASCII character
before the node (a comment in another language, a `λ` in a docstring, an emoji in a log message).
"""

from __future__ import annotations

import ast

from precisionlint.core.lines import char_column, line_text
from precisionlint.core.model import Document, Span


class Positions:
    def __init__(self, document: Document) -> None:
        self._text = document.text
        self._starts = document.line_starts
        self._line_cache: dict[int, tuple[str, bool]] = {}

    def _line(self, lineno: int) -> tuple[str, bool]:
        cached = self._line_cache.get(lineno)
        if cached is None:
            line = line_text(self._text, self._starts, min(max(lineno - 1, 0), len(self._starts) - 1))
            cached = (line, line.isascii())
            self._line_cache[lineno] = cached
        return cached

    def line_text(self, lineno: int) -> str:
        return self._line(lineno)[0]

    def column(self, lineno: int, byte_col: int) -> int:
        """0-based character column of a UTF-8 byte column on line `lineno`."""
        line, ascii_only = self._line(lineno)
        if ascii_only:
            return byte_col
        return char_column(line, byte_col)

    def offset(self, lineno: int, byte_col: int) -> int:
        """Character offset into the document text."""
        index = min(max(lineno - 1, 0), len(self._starts) - 1)
        return self._starts[index] + self.column(lineno, byte_col)

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def span(self, node: ast.AST) -> Span:
        lineno: int = node.lineno  # type: ignore[attr-defined]
        end_lineno: int = node.end_lineno or lineno  # type: ignore[attr-defined]
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset  # type: ignore[attr-defined]
        return Span(
            lineno,
            self.column(lineno, node.col_offset) + 1,  # type: ignore[attr-defined]
            end_lineno,
            self.column(end_lineno, end_col) + 1,
        )

    def segment(self, node: ast.AST) -> str:
        return self._text[self.start(node) : self.end(node)]

    @property
    def text(self) -> str:
        return self._text
