"""Inline directives: one syntax for Python, TOML and YAML comments.

    value  # precisionlint: ignore[tf32-ignored-under-mixed-precision, PL105]   (that line)
    value  # precisionlint: ignore                                              (every rule, that line)
    # precisionlint: file-ignore[PL2]                                          (the whole file, own line)
    x = 1  # noqa: PL201                                                        (Python only, codes)

Directives are read from real comments: Python through `tokenize`, TOML and YAML through a small scanner that
knows where quoted strings are. JSON has no comments, so JSON files use per-file-ignores instead.
A bare `# noqa` is NOT honoured: it is usually meant for another linter.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from precisionlint.model import Document, Finding

_DIRECTIVE = re.compile(
    r"precisionlint\s*:\s*(?P<kind>file-ignore|ignore)\b\s*(?:\[(?P<rules>[^\]]*)\])?", re.IGNORECASE
)
_NOQA = re.compile(r"\bnoqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
ALL = "*"


def _selectors(text: str | None) -> frozenset[str]:
    if text is None:
        return frozenset({ALL})
    parts = {p.strip().lower() for p in text.split(",") if p.strip()}
    return frozenset(parts) if parts else frozenset({ALL})


def _matches(selectors: frozenset[str], finding: Finding) -> bool:
    if ALL in selectors:
        return True
    code = finding.code.lower()
    return finding.name in selectors or any(code == s or (len(s) >= 2 and code.startswith(s)) for s in selectors)


def python_comments(text: str) -> Iterable[tuple[int, int, str]]:
    """(line, column, comment text) of every real comment in Python source."""
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.start[1] + 1, token.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


def hash_comments(text: str) -> Iterable[tuple[int, int, str]]:
    """Comments of TOML and YAML: a `#` outside quotes. Multi-line strings are rare in configs and a
    directive inside one would only widen a suppression on that line, never report anything."""
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" not in line:
            continue
        quote: str | None = None
        escaped = False
        for index, char in enumerate(line):
            if quote:
                if escaped:
                    escaped = False
                elif char == "\\" and quote == '"':
                    escaped = True
                elif char == quote:
                    quote = None
            elif char in "\"'":
                quote = char
            elif char == "#":
                # YAML needs whitespace before '#' for a comment (a#b is a plain scalar); TOML does not,
                # but a directive always follows a value and a space in practice.
                if index == 0 or line[index - 1] in " \t" or line[:index].strip() == "":
                    yield number, index + 1, line[index:]
                break


class Suppressions:
    def __init__(
        self, by_line: dict[int, frozenset[str]] | None = None, file_wide: frozenset[str] = frozenset()
    ) -> None:
        self.by_line = by_line if by_line is not None else {}
        self.file_wide = file_wide

    @classmethod
    def of(cls, document: Document) -> Suppressions:
        text = document.text
        lowered_has = "precisionlint" in text or (document.format == "python" and "noqa" in text)
        if not lowered_has or document.format == "json":
            return cls()
        comments = python_comments(text) if document.format == "python" else hash_comments(text)
        lines = text.splitlines()
        result = cls()
        file_wide: set[str] = set()
        for line, column, comment in comments:
            for match in _DIRECTIVE.finditer(comment):
                selectors = _selectors(match.group("rules"))
                if match.group("kind").lower() == "file-ignore":
                    own_line = lines[line - 1][: column - 1].strip() == ""
                    if own_line:
                        file_wide |= selectors
                else:
                    result.by_line[line] = result.by_line.get(line, frozenset()) | selectors
            if document.format == "python":
                noqa = _NOQA.search(comment)
                if noqa:
                    codes = _selectors(re.sub(r"[\s,]+", ",", noqa.group("codes")))
                    result.by_line[line] = result.by_line.get(line, frozenset()) | codes
        result.file_wide = frozenset(file_wide)
        return result

    def filter(self, findings: list[Finding]) -> list[Finding]:
        if not self.by_line and not self.file_wide:
            return findings
        kept = []
        for finding in findings:
            if finding.code.startswith("PL00"):  # engine findings cannot be silenced inline
                kept.append(finding)
                continue
            if self.file_wide and _matches(self.file_wide, finding):
                continue
            line_rules = self.by_line.get(finding.span.line)
            if line_rules and _matches(line_rules, finding):
                continue
            kept.append(finding)
        return kept
