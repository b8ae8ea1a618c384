"""JUnit XML, for CI systems that show test reports (Jenkins, GitLab, Azure): one test suite per file with
findings, one failed test case per finding; a clean run is one passing test case."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO
from xml.sax.saxutils import escape, quoteattr

if TYPE_CHECKING:
    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions


def _clean(text: str) -> str:
    # XML 1.0 cannot hold most control characters, even escaped; a message never needs them.
    return "".join(c if c in "\t\n\r" or ord(c) >= 0x20 else "\ufffd" for c in text)


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    total = max(len(findings), 1)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="precisionlint" tests="{total}" failures="{len(findings)}">']
    if not findings:
        out.append('  <testsuite name="precisionlint" tests="1" failures="0" errors="0" skipped="0">')
        out.append('    <testcase name="precisionlint" classname="precisionlint"/>')
        out.append("  </testsuite>")
    for path, found in by_path.items():
        name = quoteattr(_clean(path))
        out.append(f'  <testsuite name={name} tests="{len(found)}" failures="{len(found)}" errors="0" skipped="0">')
        for finding in found:
            span = finding.span
            case = quoteattr(_clean(f"{finding.code} {finding.name}"))
            message = _clean(finding.described())
            out.append(f"    <testcase name={case} classname={name} file={name} line=\"{span.line}\">")
            out.append(f"      <failure message={quoteattr(message)} type={quoteattr(finding.severity.label)}>"
                       f"{escape(_clean(f'{path}:{span.line}:{span.column}: {finding.code} {message}'))}</failure>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    stream.write("\n".join(out) + "\n")
