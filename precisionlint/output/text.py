"""The terminal format, one line per finding in the shape editors and `grep` already understand:

    configs/train.yaml:3:14: PL101 [warning] [*] message (rule-name)
      help: what the fix does

followed by a summary. `[*]` marks a finding that `--fix` repairs (a safe fix), as in ruff.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from precisionlint.model import Finding, Severity

if TYPE_CHECKING:
    from precisionlint.output import RenderOptions

Style = Callable[..., str]

_SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


def _plain(text: str, **_style: object) -> str:
    return text


def _styler(color: bool) -> Style:
    if not color:
        return _plain
    # click only when colors are wanted: plain output must not pay for importing it.
    import click

    return click.style


def has_safe_fix(finding: Finding) -> bool:
    """What `--fix` applies: a fix marked safe that actually edits something."""
    return finding.fix is not None and finding.fix.applicability == "safe" and bool(finding.fix.edits)


def format_finding(finding: Finding, style: Style = _plain) -> str:
    """The finding's line, plus an indented help line when it carries a fix."""
    span = finding.span
    color = _SEVERITY_COLOR[finding.severity]
    parts = [
        style(finding.path, bold=True) + f":{span.line}:{span.column}:",
        style(finding.code, fg=color, bold=True),
        style(f"[{finding.severity.label}]", fg=color),
    ]
    if has_safe_fix(finding):
        parts.append(style("[*]", fg="cyan"))
    parts.append(finding.message)
    parts.append(style(f"({finding.name})", dim=True))
    line = " ".join(parts)
    if finding.fix is not None and finding.fix.edits:
        # An unsafe fix is shown too: the user may still want it, but it is never applied silently.
        note = "" if finding.fix.applicability == "safe" else " (unsafe fix)"
        line += "\n  " + style("help:", fg="cyan") + f" {finding.fix.description}{note}"
    return line


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def summary_lines(findings: Sequence[Finding], fixed: int = 0) -> list[str]:
    lines: list[str] = []
    if fixed > 0:
        lines.append(f"Fixed {_plural(fixed, 'finding')}.")
    if not findings:
        lines.append("All checks passed!")
        return lines
    counts = {severity: 0 for severity in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    lines.append(
        f"Found {_plural(len(findings), 'finding')} ("
        f"{_plural(counts[Severity.ERROR], 'error')}, "
        f"{_plural(counts[Severity.WARNING], 'warning')}, "
        f"{counts[Severity.INFO]} info)."
    )
    fixable = sum(1 for finding in findings if has_safe_fix(finding))
    if fixable:
        lines.append(f"[*] {fixable} fixable with --fix.")
    return lines


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    style = _styler(options.color)
    stream.writelines(format_finding(finding, style) + "\n" for finding in findings)
    if options.summary:
        for line in summary_lines(findings, options.fixed):
            if options.color and line == "All checks passed!":
                line = style(line, fg="green", bold=True)
            stream.write(line + "\n")
