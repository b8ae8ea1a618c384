"""Findings and edits in the editor's coordinates.

precisionlint counts positions in characters (1-based lines and columns, fix edits as character offsets into
the text); the Language Server Protocol counts 0-based lines and columns in the code units the client and
server agreed on at start-up: UTF-16 by default (so a character outside the Basic Multilingual Plane, such as
an emoji in a comment, counts twice), UTF-8 bytes or UTF-32 characters where the client offers them.
"""

from __future__ import annotations

from lsprotocol import types

from precisionlint.core.lines import line_index, line_starts, line_text
from precisionlint.core.model import Edit, Finding, Severity, Span

SOURCE = "precisionlint"
_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


class Positions:
    """Maps character positions of one text to LSP positions in the negotiated encoding, and back."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = str(encoding).lower()
        self.starts = line_starts(text)

    def _units(self, chars: str) -> int:
        if self.encoding == "utf-32" or chars.isascii():
            return len(chars)
        if self.encoding == "utf-8":
            return len(chars.encode("utf-8", "surrogatepass"))
        return len(chars.encode("utf-16-le", "surrogatepass")) // 2

    def line_text(self, index: int) -> str:
        """0-based line `index` without its line break."""
        return line_text(self.text, self.starts, index)

    def position(self, line: int, column: int) -> types.Position:
        """The LSP position of a 1-based (line, character column), clamped to the text."""
        index = min(max(line - 1, 0), len(self.starts) - 1)
        text = self.line_text(index)
        chars = min(max(column - 1, 0), len(text))
        return types.Position(line=index, character=self._units(text[:chars]))

    def at_offset(self, offset: int) -> types.Position:
        offset = min(max(offset, 0), len(self.text))
        index = line_index(self.starts, offset)
        return self.position(index + 1, offset - self.starts[index] + 1)

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.line, span.column),
                           end=self.position(span.end_line, span.end_column))

    def to_columns(self, position: types.Position) -> tuple[int, int]:
        """The 1-based (line, character column) of an LSP position."""
        index = min(max(position.line, 0), len(self.starts) - 1)
        text = self.line_text(index)
        if self.encoding == "utf-32" or text.isascii():
            return index + 1, min(position.character, len(text)) + 1
        units = 0
        for chars, char in enumerate(text):
            if units >= position.character:
                return index + 1, chars + 1
            units += self._units(char)
        return index + 1, len(text) + 1

    def text_edit(self, edit: Edit) -> types.TextEdit:
        return types.TextEdit(range=types.Range(start=self.at_offset(edit.start), end=self.at_offset(edit.end)),
                              new_text=edit.replacement)


def diagnostic(finding: Finding, where: types.Range,
               related: list[types.DiagnosticRelatedInformation] | None = None) -> types.Diagnostic:
    """The finding as `check` reports it: the same code, severity and message, at `where` (its span in the
    editor's coordinates), with its `related` locations placed (see related.py; only for clients that accept
    them)."""
    return types.Diagnostic(
        range=where,
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        source=SOURCE,
        message=finding.described(),
        # The rule's name travels with the diagnostic, so that clients that show `data` (and the hover and code
        # actions, which match diagnostics back to findings) need not look the code up.
        data={"name": finding.name},
        related_information=related or None,
    )
