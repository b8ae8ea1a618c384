"""Fixes that keep the file: `check --fix` writes them, `check --diff` shows them.

How a fix is applied
--------------------
A rule's Fix is a list of Edits: character offsets into the decoded text (no BOM) and the text to put there.
Config fixes are computed by precisionlint.sources.setting_edits from the positions the loaders record while walking the
round-trip trees (tomlkit, ruamel.yaml round-trip, the JSON position scanner); script fixes are token-level
edits from the script rules. Applying a fix replaces exactly those characters and nothing else.

Why offsets, and not a re-dump of the tomlkit / ruamel tree: a re-dump re-prints the whole file from the
tree. ruamel.yaml re-indents sequences and mappings to its own settings, re-wraps long scalars, moves or
drops comments in some positions, and normalises quoting and `---` markers; tomlkit puts a new key after the
comments that belong to the next table, ignores the table's indentation and writes LF into a CRLF file. An
exact-offset edit cannot do any of that: every comment, key order, quote style, blank line, indentation and
line ending outside the named characters is untouched by construction.

Four rooms, one per concern:
  edits.py    the text edits: whether they fit the text and stay apart, and the text they make;
  plan.py     which fixes a pass takes (in order, no overlaps);
  verify.py   the round-trip trees as the judge: the new text must read back equal to the old one except
              the edited keys (a Python fix must leave code that parses);
  write.py    writing the file without ever damaging it (atomic replace, links, read-only files, a file
              changed meanwhile, signals held back during the write).
This module runs the passes for one file and a whole run. A pass re-checks the current text, takes the
applicable fixes that verify, and applies them; passes repeat until no applicable fix remains (at most
MAX_PASSES), so overlapping fixes converge without corrupting the file. The passes of one file run under the
same per-file CPU-time limit as its check (max-parse-time); a file whose fixing runs over it is left as it
was and reported (limit-exceeded).

The text checked, verified and written is one and the same: each pass checks exactly the current text (a
second BOM, or any U+FEFF at the start, is part of the text, not stripped again), and the bytes written are
verified to decode back to that text. A fix that is refused is reported beside its finding, with the reason.

`plan_setting_changes` (precisionlint.fix.setting_changes) serves `advise --write FILE`, written by the same writer.
"""

from __future__ import annotations

import codecs
import difflib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from precisionlint.core.model import Finding, Format
from precisionlint.fix.edits import apply_edits
from precisionlint.fix.plan import Refusal, applicable_groups, is_applicable, select_fixes
from precisionlint.fix.write import (
    FileBusy,
    FileChanged,
    WriteRefused,
    encode_fixed,
    write_fixed,
)
from precisionlint.sources import SourceError

if TYPE_CHECKING:
    from typing import Protocol

    from precisionlint.core.model import SourceFile
    from precisionlint.engine.options import EngineOptions
    from precisionlint.engine.results import FileResult

    class FixOutcome(Protocol):
        """What a run's outcome holds that fixing reads and updates (precisionlint.run.runner.RunOutcome)."""

        findings: list[Finding]
        errors: list[str]
        internal_error: bool
        fixed: int
        diff_text: str | None

# Overlapping fixes need one pass each; ruff stops at 100, but a config file has a handful of settings.
MAX_PASSES = 10
# Another program (a second `--fix` run, an editor) may change a file between our read and our write: fix
# its new content again, this many times at most.
WRITE_ATTEMPTS = 3

# ---------------------------------------------------------------------------------------------------------------
# check --fix / --diff
# ---------------------------------------------------------------------------------------------------------------

def _pause() -> None:
    import time

    time.sleep(0.2)


def apply_fixes(outcome: FixOutcome, sources: Sequence[SourceFile], options: EngineOptions, write: bool,
                unsafe: bool, ignored: Callable[[str], set[str]]) -> None:
    """Apply (write: --fix) or show (not write: --diff, which writes nothing) the applicable fixes; `unsafe`
    takes the unsafe ones too, and `ignored(fs_path)` names the codes per-file-ignores removes from a file.

    With --fix, each fixed file's findings in `outcome.findings` are replaced by what remains after fixing
    (in order; the caller names their rules again), and `outcome.fixed` counts the findings fixed. With --diff,
    `outcome.diff_text` is the unified diff of every file that would change ("" when none would) and
    `outcome.fixed` counts what would be fixed.
    """
    diffs: list[str] = []
    by_path: dict[str, list[Finding]] = {}
    for finding in outcome.findings:
        by_path.setdefault(finding.path, []).append(finding)
    for source in sources:
        if not any(is_applicable(f, unsafe) for f in by_path.get(source.display, ())):
            continue  # never read again, never written: its mtime stays
        for _ in range(WRITE_ATTEMPTS):
            read = _read_for_fix(source, options)
            if read is None:
                break
            data, text = read
            result = fix_text(source.display, text, source.format, options, unsafe, ignored(source.fs_path))
            outcome.internal_error = outcome.internal_error or result.internal_error
            if result.new_text == result.old_text:
                # Nothing to change (a fix refused, a limit hit, or the file already fixed through another
                # name, a link): what it holds now is what is reported, never the findings from before.
                by_path[source.display] = result.findings
                break
            if not write:
                outcome.fixed += result.fixed
                if source.format == "notebook":  # per cell, as ruff shows notebook fixes
                    from precisionlint.sources.notebook_edits import cell_diff

                    diffs.append(cell_diff(source.display, result.old_text, result.new_text))
                else:
                    diffs.append(unified_diff(source.display, result.old_text, result.new_text))
                break
            try:
                write_fixed(source.fs_path, data,
                            encode_fixed(result.new_text, data.startswith(codecs.BOM_UTF8), source.format))
            except FileBusy:
                _pause()  # another program is writing it: let it finish, then fix what it saved
                continue
            except FileChanged:
                continue  # changed since it was read: fix what it holds now
            except WriteRefused as exc:
                outcome.errors.append(f"{source.display}: {exc}")
            except OSError as exc:
                outcome.errors.append(f"{source.display}: cannot write the fixed file: {exc.strerror or exc}")
            else:
                outcome.fixed += result.fixed
                by_path[source.display] = result.findings
            break
        else:
            outcome.errors.append(f"{source.display}: kept changing while being fixed; left as it is")
    if write:
        outcome.findings = sorted((f for found in by_path.values() for f in found), key=Finding.sort_key)
    else:
        outcome.diff_text = "".join(diffs)


class FileFixResult:
    def __init__(self, old_text: str, new_text: str, fixed: int, findings: list[Finding],
                 internal_error: bool = False, refused: int = 0, limit_hit: bool = False) -> None:
        self.old_text = old_text
        self.new_text = new_text
        self.fixed = fixed  # findings fixed
        self.findings = findings  # what the new text still holds (refused fixes say why)
        self.internal_error = internal_error
        self.refused = refused  # findings whose fix was refused
        self.limit_hit = limit_hit  # fixing ran over a per-file limit: nothing changed


def _read_for_fix(source: SourceFile, options: EngineOptions) -> tuple[bytes, str] | None:
    """The file's bytes and text, read again (offsets must match the text being edited, even if it changed
    since the check), or None when it cannot be read or decoded any more."""
    from precisionlint.engine.reading import read_source
    from precisionlint.sources.decoding import decode_source

    data = read_source(source, options.limits)
    if isinstance(data, Finding):
        return None
    try:
        return data, decode_source(data, source.display, source.format)
    except SourceError:
        return None


def check_text(display: str, text: str, fmt: Format, options: EngineOptions) -> FileResult:
    """Check exactly `text`: the engine strips one BOM from the bytes it decodes, so give it one, and a U+FEFF
    that starts the text stays part of the document the fixes' offsets refer to."""
    from precisionlint.engine.check import check_bytes

    return check_bytes(display, codecs.BOM_UTF8 + text.encode("utf-8"), fmt, options)


def fix_text(display: str, text: str, fmt: Format, options: EngineOptions, unsafe: bool,
             ignored: set[str] | frozenset[str] = frozenset()) -> FileFixResult:
    """Check, fix, re-check until no applicable fix remains, within the file's CPU-time limit. Pure: reads
    and writes no file."""
    from precisionlint.engine.guard import within_time_limit

    result = within_time_limit(options.limits, _fix_passes, display, text, fmt, options, unsafe, ignored)
    if result is not None:
        return result
    return _over_limit(display, text, fmt, options, ignored,
                       f"took more than {options.limits.max_parse_time:g} s of CPU time to fix (max-parse-time)")


def _fix_passes(display: str, text: str, fmt: Format, options: EngineOptions, unsafe: bool,
                ignored: set[str] | frozenset[str]) -> FileFixResult:
    current = text
    fixed = 0
    refusals: dict[tuple[object, ...], str] = {}
    result = check_text(display, current, fmt, options)
    first = result
    for passes in range(MAX_PASSES):
        findings = [f for f in result.findings if f.code not in ignored]
        groups = applicable_groups(findings, unsafe)
        if result.document is None:
            if passes and not result.findings and not result.internal_error:
                # The fixed text holds nothing any rule reads (removing the last unused suppression can take
                # a script's last precision word with it): nothing is left to fix or to report.
                break
            if passes:  # it was checked before this pass's edits, so a limit was hit while fixing
                return _over_limit(display, text, fmt, options, ignored, _limit_reason(result), first)
            over = any(f.code == "PL003" for f in result.findings)
            return FileFixResult(text, text, 0, [f for f in result.findings if f.code not in ignored],
                                 internal_error=result.internal_error, limit_hit=over)
        if not groups:
            break
        refused: list[Refusal] = []
        # A notebook's fixes edit its JSON text (the document checked is the program of its cells).
        target = result.document.fix_document or result.document
        chosen = select_fixes(target, [fix for fix, _ in groups], options.limits, refused)
        refusals = {_fix_key(r.fix): r.reason for r in refused}
        if not chosen:
            break
        current = apply_edits(current, [edit for fix in chosen for edit in fix.edits])
        fixed += sum(count for fix, count in groups if fix in chosen)
        result = check_text(display, current, fmt, options)
    remaining: list[Finding] = []
    refused_count = 0
    for finding in result.findings:
        if finding.code in ignored:
            continue
        reason = refusals.get(_fix_key(finding.fix)) if finding.fix is not None else None
        if reason is not None and is_applicable(finding, unsafe):
            finding = finding._replace(fix=None, message=f"{finding.message} (fix not applied: {reason})")
            refused_count += 1
        remaining.append(finding)
    return FileFixResult(text, current, fixed, remaining, internal_error=result.internal_error,
                         refused=refused_count)


def _fix_key(fix: object) -> tuple[object, ...]:
    edits = getattr(fix, "edits", ())
    return tuple(sorted(edits, key=lambda e: (e.start, e.end)))


def _limit_reason(result: FileResult) -> str:
    for finding in result.findings:
        if finding.code == "PL003":
            return finding.message.removesuffix("; not checked")
    return "the fixed text could not be checked again"


def _over_limit(display: str, text: str, fmt: Format, options: EngineOptions, ignored: set[str] | frozenset[str],
                reason: str, checked: FileResult | None = None) -> FileFixResult:
    """Fixing ran over a per-file limit: the file stays as it was, its findings stand, and one
    limit-exceeded finding says that it was not fixed."""
    from precisionlint.checks._meta import LIMIT_EXCEEDED
    from precisionlint.engine.results import engine_finding

    if checked is None:
        checked = check_text(display, text, fmt, options)
    findings = [f for f in checked.findings if f.code not in ignored]
    findings.append(engine_finding(LIMIT_EXCEEDED, display, f"{reason}; not fixed"))
    return FileFixResult(text, text, 0, findings, internal_error=checked.internal_error, limit_hit=True)


def unified_diff(display: str, old: str, new: str) -> str:
    """A unified diff with `--- a/path` / `+++ b/path` headers; "" when the texts are equal. Line endings are
    kept as they are in the file (a CRLF file shows CRLF lines)."""
    if old == new:
        return ""
    name = display[2:] if display.startswith("./") else display.lstrip("/")
    lines = difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{name}", tofile=f"b/{name}")
    out: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the last line of a file without a final newline, as diff(1) shows it
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines split at "\\n" only (str.splitlines would also split at \\f, \\x1c, U+2028, which are not line
    breaks in any of these formats), each keeping its ending."""
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result
