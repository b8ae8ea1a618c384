"""SARIF 2.1.0 for code scanning (GitHub, Azure DevOps, IDE viewers).

Deterministic by design: no timestamps, no invocation block, no absolute paths unless the caller gives a
root or a finding's path lies outside it, so that the same findings always produce the same bytes and CI
diffs of the report stay quiet.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote

import precisionlint
from precisionlint.core.model import Severity

if TYPE_CHECKING:
    from precisionlint.checks import Rule
    from precisionlint.core.model import Finding, Fix
    from precisionlint.output import RenderOptions

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# The project has no published home page yet; its package index page is where users would look first.
INFORMATION_URI = "https://pypi.org/project/precisionlint/"
SRCROOT = "%SRCROOT%"

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


# --- rule descriptors -----------------------------------------------------------------------------------


def _markdown_section(markdown: str, title: str) -> str | None:
    """The body of the `## title` section of a ruff-style rule doc, or None."""
    lines = markdown.splitlines()
    heading = f"## {title}".lower()
    for index, line in enumerate(lines):
        if line.strip().lower() == heading:
            body: list[str] = []
            in_fence = False
            for follower in lines[index + 1 :]:
                if follower.lstrip().startswith("```"):
                    in_fence = not in_fence
                elif follower.startswith("## ") and not in_fence:
                    break
                body.append(follower)
            text = "\n".join(body).strip()
            return text or None
    return None


def markdown_to_text(markdown: str) -> str:
    """A plain-text rendition for viewers that do not render markdown: headings lose their #'s, fences
    their ``` lines; everything else (inline code, lists, links) already reads well as text."""
    out: list[str] = []
    in_fence = False
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence and stripped.startswith("#"):
            line = stripped.lstrip("#").strip()
        out.append(line)
    return "\n".join(out).strip()


def _descriptor(rule: Rule) -> dict[str, Any]:
    descriptor: dict[str, Any] = {"id": rule.code, "name": rule.name}
    if rule.summary:
        descriptor["shortDescription"] = {"text": rule.summary}
    doc = rule.doc.strip()
    if doc:
        what = _markdown_section(doc, "What it does") or rule.summary or doc
        descriptor["fullDescription"] = {"text": markdown_to_text(what), "markdown": what}
        descriptor["help"] = {"text": markdown_to_text(doc), "markdown": doc}
    descriptor["defaultConfiguration"] = {"level": LEVEL[rule.severity]}
    return descriptor


def _fallback_descriptor(finding: Finding) -> dict[str, Any]:
    # A finding whose rule was not passed in (the caller gave only the selected rules, and an engine rule
    # such as parse-error fired) is still described: from the registry if it knows the code, else minimally.
    from precisionlint.checks import find_rule

    rule = find_rule(finding.code)
    if rule is not None:
        return _descriptor(rule)
    return {"id": finding.code, "name": finding.name, "defaultConfiguration": {"level": LEVEL[finding.severity]}}


def _rule_table(findings: Sequence[Finding], rules: Iterable[Rule]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Descriptors of exactly the rules the results use, sorted by code, and each code's index."""
    by_code = {rule.code: rule for rule in rules}
    used: dict[str, Finding] = {}
    for finding in findings:
        used.setdefault(finding.code, finding)
    descriptors = []
    for code in sorted(used):
        rule = by_code.get(code)
        descriptors.append(_descriptor(rule) if rule is not None else _fallback_descriptor(used[code]))
    return descriptors, {code: index for index, code in enumerate(sorted(used))}


# --- locations ------------------------------------------------------------------------------------------


def _relative_uri(relative: str) -> str:
    """A relative path as a URI reference: POSIX separators, everything but unreserved characters and "/"
    percent-encoded (so spaces, "%", "#", "?", ":" and non-ASCII names survive any SARIF consumer)."""
    posix = os.path.normpath(relative).replace(os.sep, "/")
    return quote(posix, safe="/")


def _directory_uri(path: str) -> str:
    uri = Path(os.path.abspath(path)).as_uri()
    # A base URI must end with "/" or resolving "a/b.toml" against it would drop its last segment.
    return uri if uri.endswith("/") else uri + "/"


def artifact_location(path: str, root: str | None) -> dict[str, Any]:
    """Relative to %SRCROOT% when possible, so reports do not depend on where the checkout lives."""
    if root is None:
        if os.path.isabs(path):
            return {"uri": Path(path).as_uri()}
        return {"uri": _relative_uri(path), "uriBaseId": SRCROOT}
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, os.path.abspath(root))
    except ValueError:  # another drive on Windows: no relative path exists
        relative = None
    if relative is None or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": _relative_uri(relative), "uriBaseId": SRCROOT}


def _sarif_fix(fix: Fix, location: dict[str, Any]) -> dict[str, Any] | None:
    if not fix.edits:
        return None  # SARIF requires at least one replacement
    replacements = []
    # Offsets are into the original text, so replacements are listed in file order and never shift.
    for edit in sorted(fix.edits, key=lambda e: (e.start, e.end)):
        replacement: dict[str, Any] = {"deletedRegion": {"charOffset": edit.start, "charLength": edit.end - edit.start}}
        if edit.replacement:
            replacement["insertedContent"] = {"text": edit.replacement}
        replacements.append(replacement)
    return {
        "description": {"text": fix.description},
        "artifactChanges": [{"artifactLocation": dict(location), "replacements": replacements}],
        # SARIF has no notion of fix safety; keep ours so tools (and --fix) can tell them apart.
        "properties": {"applicability": fix.applicability},
    }


# --- the log --------------------------------------------------------------------------------------------


def build_log(findings: Sequence[Finding], rules: Iterable[Rule], root: str | None = None) -> dict[str, Any]:
    descriptors, index = _rule_table(findings, rules)
    results = []
    for finding in findings:
        span = finding.span
        location = artifact_location(finding.path, root)
        result: dict[str, Any] = {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": LEVEL[finding.severity],
            "message": {"text": finding.described()},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": location,
                        "region": {
                            "startLine": span.line,
                            "startColumn": span.column,
                            "endLine": span.end_line,
                            "endColumn": span.end_column,
                        },
                    }
                }
            ],
        }
        if finding.related:
            result["relatedLocations"] = [
                {
                    "id": number,
                    "physicalLocation": {
                        "artifactLocation": artifact_location(other.path or finding.path, root),
                        "region": {
                            "startLine": other.span.line,
                            "startColumn": other.span.column,
                            "endLine": other.span.end_line,
                            "endColumn": other.span.end_column,
                        },
                    },
                    "message": {"text": other.message},
                }
                for number, other in enumerate(finding.related)
            ]
        if finding.fix is not None:
            fix = _sarif_fix(finding.fix, location)
            if fix is not None:
                result["fixes"] = [fix]
        results.append(result)

    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "precisionlint",
                "version": precisionlint.__version__,
                "semanticVersion": precisionlint.__version__,
                "informationUri": INFORMATION_URI,
                "rules": descriptors,
            }
        },
    }
    if root is not None:
        # Lets a viewer on this machine open the files; consumers that know the checkout (GitHub code
        # scanning) resolve %SRCROOT% themselves. Omitted without a root so the report holds no local path.
        run["originalUriBaseIds"] = {SRCROOT: {"uri": _directory_uri(root)}}
    run["results"] = results
    # Columns and charOffsets count characters of the decoded text (Python str indices), i.e. code points,
    # not the UTF-16 code units SARIF assumes by default.
    run["columnKind"] = "unicodeCodePoints"
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    stream.write(json.dumps(build_log(findings, options.rules, options.root), indent=2) + "\n")
