"""One JSON array of findings, indented, newline-terminated; `[]` when clean.

The element keys are a public contract, documented in README.md ("The JSON contract") and tested in
tests/test_output_contract.py:

    schema_version  1 (raised only when a key changes meaning or disappears; new keys may be added)
    code, name      the rule ("PL104", "tf32-ignored-under-mixed-precision")
    severity        "error" | "warning" | "info"
    path            the file as given or found (relative to the current directory when walked)
    line, column, end_line, end_column   1-based; columns count characters (code points), end is exclusive
    message         one line
    fix             null, or {description, applicability: "safe" | "unsafe", edits: [...]}; each edit has
                    start, end (character offsets into the file's text, end exclusive, BOM not counted),
                    content (the replacement), and location / end_location ({line, column}, 1-based) for
                    tools that place edits by position
    related         only where a finding names other locations (other files', or earlier in its own file):
                    [{path, line, column, end_line, end_column, message}]

json-lines writes the same objects, one per line, with no enclosing array.
"""

from __future__ import annotations

# Absolute import: this module's own name does not shadow the standard library's json.
import json
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from collections.abc import Iterator

    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions

SCHEMA_VERSION = 1


def _starts_as_findings_count(path: str, text: str | None) -> list[int] | None:
    """Line starts counted as the file's findings count them: Python's tokenizer and YAML 1.2 end a line at a
    lone CR too, so an edit's location names the same line as its finding in a file with old Mac line endings."""
    from precisionlint.core.lines import parser_line_starts
    from precisionlint.sources import format_of

    return None if text is None else parser_line_starts(text, format_of(path) or "")


def finding_objects(findings: list[Finding], options: RenderOptions) -> Iterator[dict[str, Any]]:
    """Each finding's object, made as it is written: a run's thousands are never all held as objects."""
    from precisionlint.core.lines import position
    from precisionlint.output import source_text

    # The line starts of one file at a time: findings come sorted by file, and keeping every reported file's
    # (a list of ints per line) made the output's memory grow with the tree (23.6 MB for four copies of a corpus).
    starts_path: str | None = None
    starts: list[int] | None = None
    for finding in findings:
        item: dict[str, Any] = {"schema_version": SCHEMA_VERSION, **finding.to_json()}
        fix = item.get("fix")
        if fix and fix.get("edits"):
            if finding.path != starts_path:
                starts_path = finding.path
                starts = _starts_as_findings_count(finding.path, source_text(finding.path, options))
            for edit in fix["edits"]:
                if starts is None:
                    edit["location"] = edit["end_location"] = None
                    continue
                line, column = position(starts, edit["start"])
                end_line, end_column = position(starts, edit["end"])
                edit["location"] = {"line": line, "column": column}
                edit["end_location"] = {"line": end_line, "column": end_column}
        yield item


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    # The array written element by element, as json.dumps(objects, indent=2) spells it: each element's own
    # text indented one level more (its newlines are all structure: JSON strings escape theirs). Encoding the
    # whole array at once held every object and every piece of its text (10 MB for four copies of a corpus).
    # ensure_ascii (the default) keeps the output valid on any stream encoding, e.g. a Windows console pipe.
    separator = "[\n  "
    for item in finding_objects(findings, options):
        stream.write(separator + json.dumps(item, indent=2).replace("\n", "\n  "))
        separator = ",\n  "
    stream.write("[]\n" if separator == "[\n  " else "\n]\n")
