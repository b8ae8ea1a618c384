"""Renderers: findings in, text on a stream out. Analysis never prints; only these modules write.

Each format lives in its own module and is imported only when asked for, so `check` pays for json and
click (colors) only when the chosen format needs them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

    from precisionlint.checks import Rule
    from precisionlint.core.model import Finding

FORMATS: tuple[str, ...] = ("text", "concise", "full", "grouped", "json", "json-lines", "github", "gitlab", "junit",
                            "sarif")
# Module of each format ("text" is "concise" here; the CLI picks full or concise for a terminal).
_MODULES = {"text": "text", "concise": "text", "full": "text", "grouped": "grouped", "json": "json",
            "json-lines": "json_lines",
            "github": "github", "gitlab": "gitlab", "junit": "junit", "sarif": "sarif"}


class RenderOptions:
    """What a renderer may need beside the findings; each format reads only its own fields. (A plain class: as a
    NamedTuple of 15 fields it cost every `check` half a millisecond to create.)"""

    __slots__ = ("rules", "color", "summary", "fixed", "root", "files", "errors", "statistics", "sources", "full",
                 "unread", "unsafe_fixes", "show_fixes", "fixes_applied", "notes")

    def __init__(
        self,
        rules: Sequence[Rule],
        color: bool = False,
        summary: bool = True,
        fixed: int = 0,
        root: str | None = None,
        files: int | None = None,  # files checked (the text summary says how many); None: not known
        errors: int = 0,  # errors already printed on stderr (then the summary never says "All checks passed!")
        statistics: bool = False,  # counts per rule instead of each finding
        sources: dict[str, str] | None = None,  # text of files not on disk (standard input), by display path
        full: bool = False,  # the text format with a source frame
        unread: int = 0,  # config files with precision keys that no framework was identified to read
        unsafe_fixes: bool = False,  # --unsafe-fixes: unsafe fixes count as fixable, none is hidden
        show_fixes: bool = False,  # --show-fixes: list the fixes --fix applied
        fixes_applied: Sequence[Finding] = (),  # the findings --fix repaired (for --show-fixes)
        notes: Sequence[str] = (),  # last lines of the text summary (findings a baseline or --diff-against hid)
    ) -> None:
        self.rules = rules
        self.color = color
        self.summary = summary
        self.fixed = fixed
        self.root = root
        self.files = files
        self.errors = errors
        self.statistics = statistics
        self.sources = sources
        self.full = full
        self.unread = unread
        self.unsafe_fixes = unsafe_fixes
        self.show_fixes = show_fixes
        self.fixes_applied = fixes_applied
        self.notes = notes


def render(
    fmt: str,
    findings: list[Finding],
    stream: TextIO,
    *,
    rules: Sequence[Rule],
    color: bool = False,
    summary: bool = True,
    fixed: int = 0,
    root: str | None = None,
    files: int | None = None,
    errors: int = 0,
    statistics: bool = False,
    sources: dict[str, str] | None = None,
    unread: int = 0,
    unsafe_fixes: bool = False,
    show_fixes: bool = False,
    fixes_applied: Sequence[Finding] = (),
    notes: Sequence[str] = (),
) -> None:
    """Write `findings` (already sorted) to `stream` in format `fmt`.

    rules    the rule registry (or the selected rules); SARIF describes the rules its results use from it.
    color    ANSI colors in the text format (the caller decides: a terminal, --color, NO_COLOR).
    summary  the closing "Found N findings" / "All checks passed!" lines of the text format.
    fixed    how many findings --fix already repaired (text format summary).
    root     the project root; SARIF paths are made relative to it (uriBaseId %SRCROOT%).
    unread   config files with precision keys that no framework reads (the text summary says so).
    unsafe_fixes  whether --unsafe-fixes was given: otherwise the text summary counts the unsafe fixes it hides.

    Only the text format uses color, summary and fixed: the machine formats must stay parseable.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r} (expected one of {', '.join(FORMATS)})")
    options = RenderOptions(rules=rules, color=color, summary=summary, fixed=fixed, root=root, files=files,
                            errors=errors, statistics=statistics, sources=sources, full=fmt == "full",
                            unread=unread, unsafe_fixes=unsafe_fixes, show_fixes=show_fixes,
                            fixes_applied=fixes_applied, notes=notes)
    if statistics:
        from precisionlint.output import statistics as statistics_module

        statistics_module.render(findings, stream, options, json_output=fmt in ("json", "json-lines"))
        return
    module = importlib.import_module(f"{__name__}.{_MODULES[fmt]}")
    module.render(findings, stream, options)


def shown_path(path: str) -> str:
    """How the text and GitHub formats show a path, as ruff does: an absolute path inside the working directory
    relative to it (`/home/me/repo/configs/a.yaml` run from `/home/me/repo` is `configs/a.yaml`), anything
    else as it was named. Purely textual: symbolic links are never resolved, so a file is always shown under
    the name it was found by, never under its link target's. The machine formats (JSON, SARIF, ...) keep the
    path as named."""
    if not os.path.isabs(path):
        return path
    try:
        prefix = os.path.join(os.getcwd(), "")  # asked each time: one system call, and in-process runs chdir
    except OSError:  # the working directory was removed: nothing to be relative to
        return path
    return path[len(prefix):] if path.startswith(prefix) and len(path) > len(prefix) else path


_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
_CONTROL.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def printable_path(path: str) -> str:
    """shown_path for a terminal: a file name's control characters escaped as Python writes them (`\\n`, `\\x1b`),
    so that a name with a newline cannot start a line of its own that reads as a finding, nor an escape sequence
    rewrite the terminal (the github format escapes them its own way). A name without them is unchanged."""
    shown = shown_path(path)
    if shown.isprintable():
        return shown
    return shown.translate(_CONTROL)


def source_text(path: str, options: RenderOptions) -> str | None:
    """The decoded text of a reported file (for source frames and edit positions), or None if unreadable.
    Offsets and columns of findings count characters of this text: UTF-8, without a leading BOM."""
    if options.sources is not None and path in options.sources:
        return options.sources[path]
    from precisionlint.core.bounded_read import read_bytes

    try:  # a regular file only: a FIFO reported as unreadable must not block the report
        data = read_bytes(path, 20_000_000)
    except (OSError, ValueError):
        return None
    text = data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text
