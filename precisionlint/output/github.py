"""GitHub Actions workflow commands, one annotation per finding:

    ::warning file=configs/a.yaml,line=3,col=14,endLine=3,endColumn=20,title=PL101 rule-name::message

Escaping follows actions/toolkit packages/core/src/command.ts (escapeData / escapeProperty), which the
runner (actions/runner ActionCommand.cs) undoes: data escapes % CR LF; property values also escape : and ,
because the runner splits properties on "," and ends them at the first "::". Without that, a path or message
holding a comma or a newline could forge extra properties or extra commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from precisionlint.core.model import Severity
from precisionlint.output import shown_path

if TYPE_CHECKING:
    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    # "%" first, or the escapes just written would be escaped again.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_finding(finding: Finding) -> str:
    span = finding.span
    # Relative to the working directory, as ruff writes them: the runner attaches an annotation to a file of
    # the pull request only by its path from the workspace root, never by an absolute path.
    properties = [("file", shown_path(finding.path)), ("line", str(span.line))]
    # The checks API accepts columns only on single-line annotations ("Omit this parameter if start_line
    # and end_line have different values"), so a multi-line span is annotated by lines alone.
    if span.end_line == span.line:
        properties += [("col", str(span.column)), ("endLine", str(span.end_line)), ("endColumn", str(span.end_column))]
    else:
        properties.append(("endLine", str(span.end_line)))
    properties.append(("title", f"{finding.code} {finding.name}"))
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMAND[finding.severity]} {props}::{escape_data(finding.described())}"


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    # No summary: every line the runner reads must be a workflow command, and the exit code says the rest.
    stream.writelines(format_finding(finding) + "\n" for finding in findings)
