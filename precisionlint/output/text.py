"""The terminal format, one line per finding in the shape editors and `grep` already understand:

    configs/train.yaml:3:14: PL101 [warning] [*] message (rule-name)
      help: what the fix does
      note: why it matters, or the evidence for reading the file as a framework's

followed by a summary. The message says what is wrong and what to do; the rest is in the notes. `[*]` marks a
finding that `--fix` repairs (a safe fix), as in ruff. The `full` variant (the default on a terminal) adds the
source lines of each finding, its span underlined:

    configs/train.yaml:3:14: PL104 [warning] [*] message (rule-name)
      |
    3 |   tf32_matmul_precision: high
      |                          ^^^^
      help: what the fix does
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Severity
from precisionlint.output import printable_path

if TYPE_CHECKING:
    from typing import TextIO

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
        style(printable_path(finding.path), bold=True) + (f":cell {finding.cell}" if finding.cell is not None else "")
        + f":{span.line}:{span.column}:",
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
    for text in finding.notes:  # why, and on what evidence: below, so that the first line stays short
        line += "\n  " + style("note:", dim=True) + f" {text}"
    return line


def source_frame(finding: Finding, text: str | None, style: Style = _plain, context: int = 0) -> list[str]:
    """The finding's source lines (at most 4, plus `context` lines around), the span underlined with ^."""
    if text is None:
        return []
    lines = text.split("\n")
    span = finding.span
    if not 1 <= span.line <= len(lines):
        return []
    first = max(1, span.line - context)
    last = min(len(lines), span.end_line if span.end_line >= span.line else span.line, span.line + 3)
    last = min(len(lines), last + context)
    width = len(str(last))
    gutter = style(" " * width + " |", fg="blue", bold=True)
    out = [gutter]
    for number in range(first, last + 1):
        line = lines[number - 1].rstrip("\r").expandtabs(1)
        if len(line) > 200:
            line = line[:199] + "…"
        out.append(style(f"{number:>{width}} |", fg="blue", bold=True) + (" " + line if line else ""))
        if span.line <= number <= span.end_line:
            start = span.column if number == span.line else 1 + (len(line) - len(line.lstrip()))
            end = span.end_column if number == span.end_line else len(line) + 1
            start = max(1, min(start, len(line) + 1))
            end = max(start + 1, min(end, len(line) + 1))
            marker = " " * (start - 1) + "^" * (end - start)
            out.append(gutter + " " + style(marker, fg=_SEVERITY_COLOR[finding.severity], bold=True))
    return out


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def has_unsafe_fix(finding: Finding) -> bool:
    """A fix that only `--fix --unsafe-fixes` applies (it may change behaviour)."""
    return finding.fix is not None and finding.fix.applicability != "safe" and bool(finding.fix.edits)


def hidden_fixes_note(count: int) -> str:
    """The unsafe fixes a run leaves out, announced as ruff announces its hidden fixes."""
    return f"{count} more fix{'' if count == 1 else 'es'} available with --unsafe-fixes"


def summary_lines(findings: Sequence[Finding], fixed: int = 0, files: int | None = None, errors: int = 0, *,
                  unread: int = 0, unsafe_fixes: bool = False) -> list[str]:
    """The closing lines. `files` (when known) is the number of files checked; `errors` the errors already
    printed: then the run did not pass, whatever the findings. `unread`: config files with precision keys that no
    framework was identified to read (no framework rule looked at them). `unsafe_fixes`: the run was given
    --unsafe-fixes, so unsafe fixes count as fixable; otherwise their number is announced."""
    lines: list[str] = []
    if fixed > 0:
        lines.append(f"Fixed {_plural(fixed, 'finding')}.")
    checked = f" in {_plural(files, 'file')} checked" if files is not None else ""
    if not findings:
        if files == 0:
            if not errors:  # after "no such file or directory" the error has said it all
                lines.append("No files to check.")
        elif errors:
            lines.append(f"No findings{checked}, but {_plural(errors, 'error')} (above) stopped part of the run.")
        else:
            lines.append("All checks passed!" + (f" ({_plural(files, 'file')} checked)" if files is not None else ""))
        lines.extend(_unread_lines(unread))
        return lines
    counts = {severity: 0 for severity in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    lines.append(
        f"Found {_plural(len(findings), 'finding')} ("
        f"{_plural(counts[Severity.ERROR], 'error')}, "
        f"{_plural(counts[Severity.WARNING], 'warning')}, "
        f"{counts[Severity.INFO]} info){checked}."
    )
    fixable = sum(1 for finding in findings if has_safe_fix(finding))
    unsafe = sum(1 for finding in findings if has_unsafe_fix(finding))
    if unsafe_fixes:
        fixable, unsafe = fixable + unsafe, 0
    if fixable and unsafe:
        lines.append(f"[*] {fixable} fixable with --fix ({hidden_fixes_note(unsafe)}).")
    elif fixable:
        lines.append(f"[*] {fixable} fixable with --fix.")
    elif unsafe:
        lines.append(f"No safe fixes ({hidden_fixes_note(unsafe)}).")
    lines.extend(_unread_lines(unread))
    return lines


def _unread_lines(unread: int) -> list[str]:
    if not unread:
        return []
    files = "1 config file has" if unread == 1 else f"{unread} config files have"
    return [f"Not checked: {files} precision settings that no framework was identified to read "
            "(`precisionlint check --show-frameworks PATH` shows why)."]


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    style = _styler(options.color)
    if options.full:
        from precisionlint.output import source_text

        # One file's text at a time: findings come sorted by file, and keeping every reported file's text
        # made the report's memory grow with the tree.
        text_path: str | None = None
        text: str | None = None
        for finding in findings:
            if finding.path != text_path:
                text_path = finding.path
                text = source_text(finding.path, options)
            head, _, below = format_finding(finding, style).partition("\n")
            block = [head, *source_frame(finding, text, style)]
            if below:
                block.append(below)
            stream.write("\n".join(block) + "\n\n")
    else:
        stream.writelines(format_finding(finding, style) + "\n" for finding in findings)
    write_summary(findings, stream, options, style)


def fixes_block(applied: Sequence[Finding]) -> list[str]:
    """--show-fixes: the fixes --fix applied, per file and rule, as ruff lists them."""
    if not applied:
        return []
    by_file: dict[str, dict[tuple[str, str], int]] = {}
    for finding in applied:
        rules = by_file.setdefault(printable_path(finding.path), {})
        rules[(finding.code, finding.name)] = rules.get((finding.code, finding.name), 0) + 1
    lines = [f"Fixed {_plural(len(applied), 'finding')}:"]
    for path in sorted(by_file):
        lines.append(f"- {path}:")
        lines.extend(f"    {count} × {code} ({name})" for (code, name), count in sorted(by_file[path].items()))
    return lines


def write_summary(findings: Sequence[Finding], stream: TextIO, options: RenderOptions, style: Style = _plain) -> None:
    """The closing lines of the text formats (none with --quiet); with --show-fixes, the fixes applied first."""
    if not options.summary:
        return
    fixed = options.fixed
    if options.show_fixes and options.fixes_applied:
        stream.writelines(line + "\n" for line in fixes_block(options.fixes_applied))
        fixed = 0  # said above, in detail
    for line in summary_lines(findings, fixed, options.files, options.errors, unread=options.unread,
                              unsafe_fixes=options.unsafe_fixes):
        if options.color and line.startswith("All checks passed!"):
            line = style(line, fg="green", bold=True)
        stream.write(line + "\n")
    stream.writelines(note + "\n" for note in options.notes)
