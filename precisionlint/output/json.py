"""One JSON array of findings (Finding.to_json), indented, newline-terminated; `[]` when clean.

The element keys are a public contract (code, name, severity, path, line, column, end_line, end_column,
message, fix): scripts parse them, so they come from the one serializer in model.py.
"""

from __future__ import annotations

# Absolute import: this module's own name does not shadow the standard library's json.
import json
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from precisionlint.model import Finding
    from precisionlint.output import RenderOptions


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    # ensure_ascii (the default) keeps the output valid on any stream encoding, e.g. a Windows console pipe.
    stream.write(json.dumps([finding.to_json() for finding in findings], indent=2) + "\n")
