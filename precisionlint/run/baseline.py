"""`check --write-baseline FILE` records today's findings; `check --baseline FILE` reports only the others.

A large repository adopts the linter in one commit: record what is there, and from then on the pre-commit hook
and CI fail only on new findings, without a suppression comment on every old line. A finding is matched by its
rule, its file and a fingerprint that survives edits elsewhere in the file: the text of its source line with
whitespace collapsed, and which occurrence of that (rule, line text) in the file it is. Lines that move up or down
keep their fingerprint; a finding whose own line is edited is new (the edit touched it, so it deserves a look).

The file is JSON, sorted, one finding per entry, with paths relative to the baseline file's folder, so that it can
be committed and read from any working directory:

    {"version": 1, "findings": [{"code": "PL104", "path": "configs/train.toml", "fingerprint": "3f2a...",
                                 "line": 4, "message": "..."}]}

(`line` and `message` are there for a reader of the file; only code, path and fingerprint are compared.)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

from precisionlint.core.model import Finding

VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written; one line, shown as an error (exit 2)."""


def _relative(path: str, folder: str) -> str:
    try:
        return os.path.relpath(os.path.abspath(path), folder).replace(os.sep, "/")
    except ValueError:  # another drive (Windows)
        return os.path.abspath(path).replace(os.sep, "/")


def _line_texts(path: str, sources: dict[str, str] | None) -> list[str] | None:
    """The lines of a reported file as the findings count them (UTF-8, a leading BOM not counted)."""
    if sources is not None and path in sources:
        return sources[path].split("\n")
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    return (text[1:] if text.startswith("\ufeff") else text).split("\n")


def keys(findings: Sequence[Finding], folder: str, sources: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """(code, path relative to `folder`, fingerprint) of each finding, in the order given. Occurrences are
    counted in file order, so the same mistake twice on identical lines gets two entries."""
    texts: dict[str, list[str] | None] = {}
    seen: dict[tuple[str, str, str], int] = {}
    by_id: dict[int, tuple[str, str, str]] = {}
    for finding in sorted(findings, key=Finding.sort_key):
        if finding.path not in texts:
            texts[finding.path] = _line_texts(finding.path, sources)
        lines = texts[finding.path]
        line = finding.span.line
        if finding.cell is not None or lines is None or not 1 <= line <= len(lines):
            content = f"cell {finding.cell}: {finding.message}" if finding.cell is not None else finding.message
        else:
            content = " ".join(lines[line - 1].split())
        relative = _relative(finding.path, folder)
        occurrence = seen.get((finding.code, relative, content), 0)
        seen[(finding.code, relative, content)] = occurrence + 1
        digest = hashlib.sha256(f"{finding.code}\0{relative}\0{content}\0{occurrence}".encode()).hexdigest()[:20]
        by_id[id(finding)] = (finding.code, relative, digest)
    return [by_id[id(finding)] for finding in findings]


def write(file: str, findings: Sequence[Finding], sources: dict[str, str] | None = None) -> int:
    """Record `findings` in `file`; how many."""
    folder = os.path.dirname(os.path.abspath(file))
    entries = [
        {"code": code, "path": path, "fingerprint": digest, "line": finding.span.line, "message": finding.message}
        for finding, (code, path, digest) in zip(findings, keys(findings, folder, sources), strict=True)
    ]
    entries.sort(key=lambda entry: (entry["path"], entry["line"], entry["code"], entry["fingerprint"]))
    text = json.dumps({"version": VERSION, "findings": entries}, indent=1, ensure_ascii=False) + "\n"
    try:
        with open(file, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except OSError as exc:
        raise BaselineError(f"{file}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(entries)


def load(file: str) -> set[tuple[str, str, str]]:
    """The (code, path, fingerprint) entries of a baseline file."""
    try:
        with open(file, encoding="utf-8") as handle:
            data: Any = json.load(handle)
    except OSError as exc:
        raise BaselineError(f"{file}: cannot read the baseline: {exc.strerror or exc} (--write-baseline FILE "
                            "creates one)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{file}: not a baseline written by --write-baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{file}: not a baseline written by --write-baseline (expected version {VERSION})")
    entries = set()
    for entry in data["findings"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("code", "path",
                                                                                          "fingerprint")):
            raise BaselineError(f"{file}: an entry lacks code, path or fingerprint: {json.dumps(entry)[:120]}")
        entries.add((entry["code"], entry["path"], entry["fingerprint"]))
    return entries


def new_findings(file: str, findings: Sequence[Finding], sources: dict[str, str] | None = None) -> list[Finding]:
    """The findings that are not in the baseline `file`."""
    known = load(file)
    folder = os.path.dirname(os.path.abspath(file))
    return [finding for finding, key in zip(findings, keys(findings, folder, sources), strict=True)
            if key not in known]
