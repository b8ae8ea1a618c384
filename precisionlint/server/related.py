"""A finding's related locations (the earlier occurrence of a repeated key, the DeepSpeed JSON a config names)
as the protocol's `Diagnostic.relatedInformation`.

A related location is counted in characters of its file, as the finding is; the editor wants it in the
negotiated encoding (UTF-16 by default), which needs that file's text. Nothing is read for it: the document's
own text, the text the check loaded a linked file from (its editor buffer or the disk), or an open buffer's.
When none of them is at hand, the location covers its whole lines (lines count the same in every encoding), a
coarser place but never a wrong one.

Notebooks are left out: a related location in a notebook is counted in the program its code cells make, not in
a cell or in the `.ipynb` text, and no place for it in the editor is known for certain.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from lsprotocol import types
from pygls.uris import from_fs_path

from precisionlint.core.model import SAME_FILE, Finding, Related, Span
from precisionlint.server.convert import Positions


def wants_related(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether the client declared that it accepts `relatedInformation` in published diagnostics."""
    document = capabilities.text_document if capabilities is not None else None
    publish = document.publish_diagnostics if document is not None else None
    return bool(publish is not None and publish.related_information)


def _whole_lines(span: Span) -> types.Range:
    return types.Range(start=types.Position(line=max(span.line - 1, 0), character=0),
                       end=types.Position(line=max(span.end_line, span.line), character=0))


class RelatedPlaces:
    """Places the related locations of one document's findings (a file's line starts are found once)."""

    def __init__(self, own_uri: str, own_path: str | None, own: Positions | None, encoding: str,
                 buffer_of: Callable[[str], str | None], loaded_text: Callable[[str], str | None]) -> None:
        """`own`: the document's own positions, None where its own places cannot be mapped (a notebook);
        `buffer_of(realpath)`: an open editor buffer's text; `loaded_text(path)`: the text the server's project
        model loaded a linked file from (ProjectModel.loaded_text)."""
        self.own_uri = own_uri
        self.own_real = os.path.realpath(own_path) if own_path is not None else None
        self.own = own
        self.encoding = encoding
        self.buffer_of = buffer_of
        self.loaded_text = loaded_text
        self.files: dict[str, tuple[str, Positions | None]] = {}  # real path -> (uri, positions or None)

    def _file(self, path: str) -> tuple[str, Positions | None]:
        absolute = os.path.abspath(path)  # as `check` shows it: relative to the working directory (the workspace)
        real = os.path.realpath(absolute)
        found = self.files.get(real)
        if found is None:
            text = self.loaded_text(real)
            if text is None:
                text = self.buffer_of(real)
            found = self.files[real] = (from_fs_path(absolute) or "",
                                        Positions(text, self.encoding) if text is not None else None)
        return found

    def place(self, related: Related) -> types.DiagnosticRelatedInformation | None:
        if related.path == SAME_FILE or (self.own_real is not None
                                          and os.path.realpath(os.path.abspath(related.path)) == self.own_real):
            if self.own is None:
                return None
            uri, where = self.own_uri, self.own.range(related.span)
        else:
            if related.path.endswith(".ipynb"):
                return None
            uri, positions = self._file(related.path)
            if not uri:
                return None
            where = positions.range(related.span) if positions is not None else _whole_lines(related.span)
        return types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=where),
                                                  message=related.message)

    def of(self, finding: Finding) -> list[types.DiagnosticRelatedInformation]:
        return [info for info in map(self.place, finding.related) if info is not None]
