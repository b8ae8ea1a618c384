"""`check --diff-against REF`: only the findings on lines changed since a git revision (a pull request's base).

The changed lines come from `git diff -U0 REF` (the working tree against REF, so uncommitted edits count);
files git does not track yet are new, every line of them changed. A finding counts when one of its lines (from
its first to its last) is changed. git is run as a program, with no shell; the checked files are never run.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence

from precisionlint.core.model import Finding

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class ChangedLinesError(Exception):
    """Not a git work tree, an unknown revision, no git: one line, shown as an error (exit 2)."""


def _git(args: list[str], cwd: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise ChangedLinesError("--diff-against needs git, and git is not on the PATH") from None
    except subprocess.TimeoutExpired:
        raise ChangedLinesError(f"--diff-against: `git {' '.join(args)}` took more than 120 s") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ChangedLinesError(detail[-1] if detail else f"git {args[0]} failed")
    return done.stdout.decode("utf-8", "surrogateescape")


def changed_lines(ref: str, cwd: str = ".") -> dict[str, set[int] | None]:
    """Absolute path -> changed line numbers (None: the whole file is new) since `ref`."""
    try:
        top = _git(["rev-parse", "--show-toplevel"], cwd).strip()
    except ChangedLinesError:
        raise ChangedLinesError(f"--diff-against: {os.path.abspath(cwd)} is not inside a git work tree") from None
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
    except ChangedLinesError:
        raise ChangedLinesError(f"--diff-against: {ref!r} is not a commit, branch or tag of this repository "
                                f"(`git log --oneline -3 {ref}` says more)") from None
    diff = _git(["-c", "core.quotePath=false", "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames",
                 ref, "--"], top)
    changed: dict[str, set[int] | None] = {}
    current: set[int] | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            if name == "/dev/null":  # a deleted file
                current = None
                continue
            name = name[2:] if name.startswith("b/") else name
            current = changed.setdefault(os.path.normpath(os.path.join(top, name)), set())
        elif current is not None:
            match = _HUNK.match(line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or "1")
                current.update(range(start, start + count))
    for name in _git(["ls-files", "--others", "--exclude-standard", "-z"], top).split("\0"):
        if name:
            changed[os.path.normpath(os.path.join(top, name))] = None
    return changed


def on_changed_lines(findings: Sequence[Finding], changed: dict[str, set[int] | None]) -> list[Finding]:
    kept = []
    for finding in findings:
        # git names files under the resolved top of the work tree; the folders above a finding's file are
        # resolved the same way, the file itself not (a link is a changed file of its own).
        absolute = os.path.abspath(finding.path)
        path = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
        lines = changed.get(os.path.normpath(path), set())
        if lines is None:
            kept.append(finding)
            continue
        last = max(finding.span.end_line, finding.span.line)
        if finding.cell is None and any(number in lines for number in range(finding.span.line, last + 1)):
            kept.append(finding)
    return kept
