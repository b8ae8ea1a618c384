"""Inline directives: one syntax for Python, TOML and YAML comments.

    value  # precisionlint: ignore[tf32-ignored-under-mixed-precision, PL105]   (that line)
    value  # precisionlint: ignore                                              (every rule, that line)
    # precisionlint: file-ignore[PL2]                                          (the whole file, own line)
    # precisionlint: disable[PL104]                                            (from here, own line ...)
    # precisionlint: enable[PL104]                                             (... to here, or the end)
    x = 1  # noqa: PL201                                                        (Python only, codes)

Directives are read from real comments: Python through `tokenize`, TOML and YAML through a small scanner that
knows where quoted strings are. JSON has no comments, so JSON files use per-file-ignores instead.
A bare `# noqa` is NOT honoured: it is usually meant for another linter, and so are its non-PL codes.

The directives themselves are checked: a rule name that does not exist is reported (invalid-suppression,
with a suggestion), and, when selected, unused-suppression reports a directive that suppressed nothing, with
a safe fix that removes it. `check --add-noqa` writes line directives for existing findings
(precisionlint.fix.noqa).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.lines import line_starts
from precisionlint.core.model import Document, Edit, Finding, Fix, Severity, Span
from precisionlint.core.patterns import lazy_pattern

if TYPE_CHECKING:
    from typing import Any

DIRECTIVE = lazy_pattern(globals(), "DIRECTIVE",
    r"precisionlint\s*:\s*(?P<kind>file-ignore|ignore|disable|enable)\b\s*(?:\[(?P<rules>[^\]]*)\])?",
    re.IGNORECASE,
)
_NOQA = lazy_pattern(
    globals(), "_NOQA", r"\bnoqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
ALL = "*"
_OUR_CODE = lazy_pattern(globals(), "_OUR_CODE", r"^pl\d+$")
INVALID_CODE, INVALID_NAME = "PL006", "invalid-suppression"
UNUSED_CODE, UNUSED_NAME = "PL007", "unused-suppression"


def _selectors(text: str | None) -> frozenset[str]:
    if text is None:
        return frozenset({ALL})
    parts = {p.strip().lower() for p in text.split(",") if p.strip()}
    return frozenset(parts) if parts else frozenset({ALL})


def _selector_matches(selector: str, code: str, name: str) -> bool:
    if selector == ALL:
        return True
    code = code.lower()
    return name == selector or code == selector or (len(selector) >= 2 and code.startswith(selector))


def _matches(selectors: frozenset[str], finding: Finding) -> bool:
    return any(_selector_matches(s, finding.code, finding.name) for s in selectors)


def python_comments(text: str) -> Iterable[tuple[int, int, str]]:
    """(line, column, comment text) of every real comment in Python source, lines counted as the interpreter
    counts them (a lone CR ends a line: the reader translates line ends as Python's own reading of a file does,
    which moves no column)."""
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.start[1] + 1, token.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


def hash_comments(text: str, starts: list[int] | None = None) -> Iterable[tuple[int, int, str]]:
    """Comments of TOML and YAML: a `#` outside quotes. Multi-line strings are rare in configs and a
    directive inside one would only widen a suppression on that line, never report anything. `starts`: the
    lines as the document counts them (core/lines.parser_line_starts; `\\n` only when not given)."""
    for number, line in enumerate(_lines(text, line_starts(text) if starts is None else starts), start=1):
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


def _lines(text: str, starts: list[int]) -> Iterable[str]:
    """Each line of `text` by `starts`, without its line break (`\\n`, `\\r\\n` or a lone `\\r`)."""
    if "\r" not in text:  # lines end at a newline only, whichever starts were given: one split
        yield from text.split("\n")
        return
    for line in range(1, len(starts) + 1):
        start, end, _ = line_bounds(text, starts, line)
        yield text[start:end]


def line_bounds(text: str, starts: list[int], line: int) -> tuple[int, int, int]:
    """(start, end of its text, start of the next line) of 1-based `line`, the break between the last two.
    Raises ValueError for a line the text does not have."""
    if not 1 <= line <= len(starts):
        raise ValueError(f"no line {line}")
    start = starts[line - 1]
    following = starts[line] if line < len(starts) else len(text)
    end = following
    if end > start and text[end - 1] == "\n":
        end -= 1
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end, following


def may_hold_directives(text: str, python: bool) -> bool:
    """Whether the raw text holds a directive's shape anywhere (a `noqa: CODE` counts only in Python, and only
    when it names one of our codes: `# noqa: E501` is another linter's, and since a selector applies to the
    codes it is a prefix of, only a `PL` and digits can select ours). A case-insensitive regex search over a
    whole file costs more than the rest of this module's work on most files: in ASCII text, which lowers
    exactly as the regex folds case (other text may not: the Kelvin sign folds to `k`), the words are found
    with `str.find` first and the patterns only tried where they start. A file that may hold one is then
    tokenized to find its real comments, which costs more than parsing it."""
    if not text.isascii():
        return bool(DIRECTIVE.search(text) or (python and any(_names_our_code(m) for m in _NOQA.finditer(text))))
    lowered = text.lower()
    for word, pattern in (("precisionlint", DIRECTIVE), ("noqa", _NOQA if python else None)):
        if pattern is None:
            continue
        start = lowered.find(word)
        while start != -1:
            match = pattern.match(text, start)  # `\b` still sees the character before `start`
            if match and (word == "precisionlint" or _names_our_code(match)):
                return True
            start = lowered.find(word, start + 1)
    return False


def _names_our_code(noqa: re.Match[str]) -> bool:
    return any(_OUR_CODE.match(code.lower()) for code in re.split(r"[\s,]+", noqa.group("codes")))


class Directive:
    """One directive as written: its kind, where its comment is, and the selectors it names (lowercased, in
    order). `used` collects the selectors that suppressed a finding."""

    __slots__ = ("kind", "line", "column", "comment", "selectors", "own_line", "used", "end_line", "noqa")

    def __init__(self, kind: str, line: int, column: int, comment: str, selectors: tuple[str, ...],
                 own_line: bool, noqa: bool = False) -> None:
        self.kind = kind  # "ignore" | "file-ignore" | "disable" | "enable"
        self.line = line
        self.column = column
        self.comment = comment
        self.selectors = selectors
        self.own_line = own_line
        self.used: set[str] = set()
        self.end_line: int | None = None  # a disable directive: the line of its enable (None: the end)
        self.noqa = noqa

    def covers(self, line: int) -> bool:
        if self.kind == "ignore":
            return line == self.line
        if self.kind == "file-ignore":
            return self.own_line
        if self.kind == "disable":
            return self.own_line and line > self.line and (self.end_line is None or line < self.end_line)
        return False


class Suppressions:
    def __init__(
        self, by_line: dict[int, frozenset[str]] | None = None, file_wide: frozenset[str] = frozenset()
    ) -> None:
        self.by_line = by_line if by_line is not None else {}
        self.file_wide = file_wide
        self.directives: list[Directive] = []

    @classmethod
    def of(cls, document: Document) -> Suppressions:
        text = document.text
        if document.format == "json":
            return cls()
        # Reading comments means tokenizing a Python file (slower than parsing it), and most files that say
        # `noqa` say it to another linter: look for a directive's full shape in the raw text first.
        if not may_hold_directives(text, document.format == "python"):
            return cls()
        # Lines as the document's findings count them (a lone CR ends a line of Python and YAML): a directive
        # covers the findings of its own line, and its own findings' positions agree with their fixes'.
        starts = document.line_starts
        comments = python_comments(text) if document.format == "python" else hash_comments(text, starts)
        lines = list(_lines(text, starts))
        result = cls()
        file_wide: set[str] = set()
        open_ranges: list[Directive] = []
        for line, column, comment in comments:
            own_line = line - 1 < len(lines) and lines[line - 1][: column - 1].strip() == ""
            for match in DIRECTIVE.finditer(comment):
                kind = match.group("kind").lower()
                selectors = _selectors(match.group("rules"))
                ordered = tuple(dict.fromkeys(
                    p.strip().lower() for p in (match.group("rules") or "").split(",") if p.strip()
                )) or (ALL,)
                directive = Directive(kind, line, column, comment, ordered, own_line)
                result.directives.append(directive)
                if kind == "file-ignore":
                    if own_line:
                        file_wide |= selectors
                elif kind == "ignore":
                    result.by_line[line] = result.by_line.get(line, frozenset()) | selectors
                elif kind == "disable":
                    if own_line:
                        open_ranges.append(directive)
                elif kind == "enable":
                    for opened in open_ranges:
                        if opened.end_line is None and (ALL in selectors or set(opened.selectors) <= selectors):
                            opened.end_line = line
                    open_ranges = [d for d in open_ranges if d.end_line is None]
            if document.format == "python":
                noqa = _NOQA.search(comment)
                if noqa:
                    codes = _selectors(re.sub(r"[\s,]+", ",", noqa.group("codes")))
                    result.by_line[line] = result.by_line.get(line, frozenset()) | codes
                    # Only PL and digits: PLR0913, PLW0603 are ruff's pylint codes, not ours.
                    ours = tuple(c for c in dict.fromkeys(
                        c.lower() for c in re.split(r"[\s,]+", noqa.group("codes")) if c) if _OUR_CODE.match(c))
                    if ours:
                        result.directives.append(Directive("ignore", line, column, comment, ours, own_line,
                                                           noqa=True))
        result.file_wide = frozenset(file_wide)
        return result

    def _suppressing(self, finding: Finding) -> Directive | None:
        for directive in self.directives:
            if directive.kind == "enable" or not directive.covers(finding.span.line):
                continue
            for selector in directive.selectors:
                if _selector_matches(selector, finding.code, finding.name):
                    directive.used.add(selector)
                    return directive
        return None

    def filter(self, findings: list[Finding]) -> list[Finding]:
        if not self.directives and not self.by_line and not self.file_wide:
            return findings
        kept = []
        for finding in findings:
            if finding.code.startswith("PL00"):  # engine findings cannot be silenced inline
                kept.append(finding)
                continue
            if self._suppressing(finding) is not None:
                continue
            kept.append(finding)
        return kept

    def apply(self, findings: list[Finding], document: Document, rules: Sequence[Any], gpus: bool) -> list[Finding]:
        """filter(), then the findings about the directives themselves for the selected rules among
        invalid-suppression and unused-suppression."""
        kept = self.filter(findings)
        if not self.directives:
            return kept
        selected = {rule.code for rule in rules}
        if INVALID_CODE in selected:
            kept.extend(self._invalid(document))
        if UNUSED_CODE in selected:
            kept.extend(self._unused(document, rules, gpus))
        return kept

    # --- directives that are wrong or useless ---------------------------------------------------------------

    def _invalid(self, document: Document) -> Iterable[Finding]:
        from precisionlint.checks import all_rules

        known = all_rules()
        for directive in self.directives:
            for selector in directive.selectors:
                if selector == ALL or any(_selector_matches(selector, r.code, r.name) for r in known):
                    continue
                from precisionlint.checks import did_you_mean

                yield _finding(INVALID_CODE, INVALID_NAME, Severity.WARNING, document, directive,
                               f"suppression names unknown rule '{selector}'{did_you_mean(selector)} "
                               "(the directive suppresses nothing for it)")
            if directive.kind in ("file-ignore", "disable") and not directive.own_line:
                yield _finding(INVALID_CODE, INVALID_NAME, Severity.WARNING, document, directive,
                               f"'{directive.kind}' takes effect only on a line of its own; here it is ignored")

    def _unused(self, document: Document, rules: Sequence[Any], gpus: bool) -> Iterable[Finding]:
        from precisionlint.checks import all_rules

        known = all_rules()
        selected = {rule.code for rule in rules}
        for directive in self.directives:
            if directive.kind == "enable":
                continue
            unused: list[str] = []
            not_enabled = True
            for selector in directive.selectors:
                if selector in directive.used:
                    continue
                named = known if selector == ALL else [r for r in known if _selector_matches(selector, r.code, r.name)]
                if not named:
                    continue  # unknown: invalid-suppression says so
                if any(r.needs_gpu and not gpus and r.code in selected for r in named):
                    continue  # the rule could fire with a target GPU: not provably unused
                unused.append(selector)
                not_enabled = not_enabled and not any(r.code in selected for r in named)
            if not unused:
                continue
            names = ", ".join("every rule" if s == ALL else s for s in unused)
            why = "the rule is not enabled" if not_enabled else "nothing to suppress here"
            fix = _removal(document, directive, unused)
            yield _finding(UNUSED_CODE, UNUSED_NAME, Severity.WARNING, document, directive,
                           f"unused suppression ({names}): {why}", fix)


def _finding(code: str, name: str, severity: Severity, document: Document, directive: Directive,
             message: str, fix: Fix | None = None) -> Finding:
    length = len(directive.comment.rstrip())
    return Finding(code, name, severity, document.path,
                   Span(directive.line, directive.column, directive.line, directive.column + max(length, 1)),
                   message, fix)


def _removal(document: Document, directive: Directive, unused: list[str]) -> Fix | None:
    """A safe fix: remove the whole comment when it is nothing but this directive, or the unused names from
    its list. Comments that hold more (another tool's noqa codes, prose) keep their text: no fix."""
    text = document.text
    try:
        start_of_line, _, next_line = line_bounds(text, document.line_starts, directive.line)
    except ValueError:
        return None
    comment_start = start_of_line + directive.column - 1
    comment = directive.comment.rstrip("\r\n")
    if text[comment_start : comment_start + len(comment)] != comment:
        return None
    body = comment.lstrip("#").strip()
    whole = set(unused) == set(directive.selectors)
    if whole and (
        (not directive.noqa and DIRECTIVE.fullmatch(body) is not None)
        or (directive.noqa and re.fullmatch(r"noqa\s*:\s*[A-Za-z0-9,\s]+", body, re.IGNORECASE)
            and all(_OUR_CODE.match(c.lower()) for c in re.split(r"[\s,]+", body.split(":", 1)[1]) if c))
    ):
        end = comment_start + len(comment)
        if directive.own_line:  # the whole line, with its line break
            return Fix("Remove the unused suppression", "safe", (Edit(start_of_line, next_line, ""),))
        begin = comment_start
        while begin > start_of_line and text[begin - 1] in " \t":
            begin -= 1
        return Fix("Remove the unused suppression", "safe", (Edit(begin, end, ""),))
    if directive.noqa or whole:
        return None
    match = DIRECTIVE.search(comment)
    if match is None or match.group("rules") is None:
        return None
    parts = [p.strip() for p in match.group("rules").split(",") if p.strip()]
    kept = [p for p in parts if p.lower() not in unused]
    if not kept or len(kept) == len(parts):
        return None
    start = comment_start + match.start("rules")
    return Fix(f"Remove {', '.join(unused)} from the suppression", "safe",
               (Edit(start, comment_start + match.end("rules"), ", ".join(kept)),))
