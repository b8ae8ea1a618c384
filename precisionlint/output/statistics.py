"""--statistics: how many findings of each rule, most frequent first (as ruff's), as a table or as JSON.

A rule's findings may differ in severity (a rule lowers its severity where the evidence is weaker, or a
configuration changes it): each severity is shown with its count, since a warning among infos fails the run.
The table ends with the totals and the fixes, as the text summary does."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions


def render(findings: list[Finding], stream: TextIO, options: RenderOptions, json_output: bool = False) -> None:
    from precisionlint.core.model import Severity
    from precisionlint.output.text import has_safe_fix, has_unsafe_fix, write_summary

    counts: dict[str, dict[str, Any]] = {}
    for finding in findings:
        entry = counts.setdefault(finding.code, {"name": finding.name, "count": 0, "fixable": 0, "unsafe": 0,
                                                 "severities": {}})
        entry["count"] += 1
        entry["fixable"] += 1 if has_safe_fix(finding) else 0
        entry["unsafe"] += 1 if has_unsafe_fix(finding) else 0
        entry["severities"][finding.severity] = entry["severities"].get(finding.severity, 0) + 1
    rows = sorted(counts.items(), key=lambda item: (-item[1]["count"], item[0]))
    order = sorted(Severity, reverse=True)  # error, warning, info
    if json_output:
        payload = [{"code": code, "name": entry["name"], "count": entry["count"],
                    "fixable": entry["fixable"] + (entry["unsafe"] if options.unsafe_fixes else 0),
                    "severity": max(entry["severities"]).label,
                    "severities": {s.label: entry["severities"][s] for s in order if s in entry["severities"]}}
                   for code, entry in rows]
        stream.write(json.dumps(payload, indent=2) + "\n")
        return
    if not rows:
        if options.files != 0:
            stream.write("No findings.\n")
        elif not options.errors:
            stream.write("No files to check.\n")
        return
    width = max(len(str(entry["count"])) for _, entry in rows)
    name_width = max(len(entry["name"]) for _, entry in rows)
    for code, entry in rows:
        severities = entry["severities"]
        if len(severities) == 1:
            shown = next(iter(severities)).label
        else:
            shown = ", ".join(f"{severities[s]} {s.label}" for s in order if s in severities)
        count = entry["count"]
        fixable = entry["fixable"] + (entry["unsafe"] if options.unsafe_fixes else 0)
        mark = " [*]" if fixable == count else (f" [*] {fixable} fixable" if fixable else "")
        if entry["unsafe"] and not options.unsafe_fixes:
            mark += f" ({entry['unsafe']} with --unsafe-fixes)"
        stream.write(f"{count:>{width}}  {code}  {entry['name']:<{name_width}}  [{shown}]{mark}\n")
    write_summary(findings, stream, options)
