"""GitLab Code Quality: a JSON array of issues, the `codequality` report artifact of a merge request.

https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format: description, check_name,
fingerprint (stable across runs: it must not change when unrelated lines move), severity, location.path and
location.lines.begin. Paths are relative to the project directory, as GitLab resolves them.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any, TextIO

from precisionlint.core.model import Severity

if TYPE_CHECKING:
    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions

SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _path(path: str) -> str:
    if os.path.isabs(path):
        try:
            path = os.path.relpath(path)
        except ValueError:
            pass
    return path.replace(os.sep, "/")


def issues(findings: list[Finding]) -> list[dict[str, Any]]:
    result = []
    seen: dict[str, int] = {}
    for finding in findings:
        path = _path(finding.path)
        # The line is left out of the fingerprint, so that an edit above a finding does not make it "new";
        # repeats of one message in one file are told apart by their order.
        base = f"{finding.code}\0{path}\0{finding.message}"
        occurrence = seen.get(base, 0)
        seen[base] = occurrence + 1
        fingerprint = hashlib.sha256(f"{base}\0{occurrence}".encode("utf-8", "surrogateescape")).hexdigest()
        result.append({
            "description": f"{finding.code} {finding.described()}",
            "check_name": f"{finding.code} {finding.name}",
            "fingerprint": fingerprint,
            "severity": SEVERITY[finding.severity],
            "location": {"path": path, "lines": {"begin": finding.span.line, "end": finding.span.end_line}},
        })
    return result


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    stream.write(json.dumps(issues(findings), indent=2) + "\n")
