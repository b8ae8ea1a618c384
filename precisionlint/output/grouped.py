"""The grouped format (as ruff's): each file's name once, then its findings, indented, without the path:

    configs/train.yaml:
      3:14 PL101 [warning] [*] message (rule-name)
        help: what the fix does

followed by the text summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from precisionlint.output import printable_path
from precisionlint.output.text import _SEVERITY_COLOR, _styler, has_safe_fix, write_summary

if TYPE_CHECKING:
    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    style = _styler(options.color)
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(finding.path, []).append(finding)
    for path, group in by_file.items():
        stream.write(style(printable_path(path), bold=True) + ":\n")
        width = max(len(f"{f.span.line}:{f.span.column}") for f in group)
        for finding in group:
            color = _SEVERITY_COLOR[finding.severity]
            cell = f"cell {finding.cell}:" if finding.cell is not None else ""
            where = f"{cell}{finding.span.line}:{finding.span.column}"
            parts = [f"  {where:<{width}}", style(finding.code, fg=color, bold=True),
                     style(f"[{finding.severity.label}]", fg=color)]
            if has_safe_fix(finding):
                parts.append(style("[*]", fg="cyan"))
            parts.extend([finding.message, style(f"({finding.name})", dim=True)])
            stream.write(" ".join(parts) + "\n")
            if finding.fix is not None and finding.fix.edits:
                note = "" if finding.fix.applicability == "safe" else " (unsafe fix)"
                stream.write("    " + style("help:", fg="cyan") + f" {finding.fix.description}{note}\n")
            for text in finding.notes:
                stream.write("    " + style("note:", dim=True) + f" {text}\n")
        stream.write("\n")
    write_summary(findings, stream, options, style)
