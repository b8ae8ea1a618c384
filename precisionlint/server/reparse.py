"""The tree of an edited buffer from the tree of its previous text, parsing again only the top-level statements
the edit touched.

Typing changes one line at a time, yet parsing a 2,000-line script again is about 17 ms, a third of a change's
check. Python's grammar makes a module a sequence of top-level statements, each starting at column 0 of a line
with the tokenizer in its plain state (no open bracket, string or line continuation, no indentation); what
follows one statement does not change how it parses. So the statements before the edited ones are the previous
tree's, and so are those after them when the line count is unchanged (typing within lines; otherwise their line
numbers change, and the rest of the text is parsed again); only the text from the end of the last untouched
statement before the edit to the start of the first untouched one after it (or the end) is parsed, as a module
of its own, at its own line numbers (blank lines in front of it: the columns are unchanged, since it starts at a
line's start).

The result is the tree `ast.parse` gives for the new text, node for node (tests/test_server_reparse.py compares
them on edits of real files). Anything this reasoning does not cover gives None, and the caller parses the whole
text as before: a carriage return anywhere (lines counted differently), a statement sharing a line with another
across the border (`a = 1; b = 2`), a line continuation at a border, a future import in the parsed part (or
`barry_as_FLUFL` anywhere, which changes how `<>` parses), and any failure to parse the part (a syntax error is
then reported by the whole parse, with its own message and position).

The new tree shares the untouched statements' nodes with the previous one: nothing in precisionlint changes a
node after parsing (tests/test_server_reparse.py checks that a check leaves a tree as it was).

Also here, from the same comparison of two texts: whether an edit changed the lines that can import a package
(import_lines_differ), found on the lines it touched only.
"""

from __future__ import annotations

import ast
import re
import warnings

# Every line that can import a package (project.vendored matches such lines against the folders' package names).
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from|import)[ \t].*$", re.MULTILINE)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (string comparisons run in C; about log2(n) of them)."""
    size = min(len(a), len(b))
    if a[:size] == b[:size]:
        return size
    low, high = 0, size  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


def common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix, at most `limit`."""
    size = min(len(a), len(b), limit)
    if a[len(a) - size:] == b[len(b) - size:]:
        return size
    low, high = 0, size
    while high - low > 1:
        middle = (low + high) // 2
        if a[len(a) - middle:len(a) - low] == b[len(b) - middle:len(b) - low]:
            low = middle
        else:
            high = middle
    return low


def _first_line(statement: ast.stmt) -> int:
    """The first line of a top-level statement, its decorators included."""
    first = statement.lineno
    for decorator in getattr(statement, "decorator_list", ()):
        first = min(first, decorator.lineno)
    return first


def _last_line(statement: ast.stmt) -> int:
    return statement.end_lineno or statement.lineno  # always set by ast.parse


def _continues(text: str, line_end: int) -> bool:
    """Whether the line ending at offset `line_end` ends with a backslash (a line continuation, or one in a
    comment: either way not a place to cut)."""
    line = text[text.rfind("\n", 0, line_end) + 1:line_end]
    return line.rstrip(" \t\f").endswith("\\")


def _line_offsets(text: str, first: int, last: int) -> tuple[int, int]:
    """Offsets of the start of 1-based line `first` and of the end of line `last` (its line break included)."""
    start = 0
    for _ in range(first - 1):
        start = text.index("\n", start) + 1
    end = start
    for _ in range(last - first + 1):
        found = text.find("\n", end)
        end = len(text) if found == -1 else found + 1
    return start, end


def reparsed(old_text: str, old_tree: ast.Module, new_text: str) -> ast.Module | None:
    """The tree of `new_text`, given `old_tree`, the tree of `old_text`; None when only parsing the whole text
    can tell (see the module's docstring)."""
    if not old_tree.body or "\r" in new_text or "\r" in old_text or "barry_as_FLUFL" in new_text:
        return None
    prefix = common_prefix(old_text, new_text)
    if prefix == len(old_text) == len(new_text):
        return None  # the same text: the caller's own business
    first_changed = old_text.count("\n", 0, prefix) + 1
    body = old_tree.body
    # The statements kept: those that end before the first changed line, and, when the line count is the same,
    # those that start after the last one (with lines added or removed, their line numbers would change: the
    # rest of the text is parsed again).
    before = 0
    while before < len(body) and _last_line(body[before]) < first_changed:
        before += 1
    after = len(body)
    if old_text.count("\n") == new_text.count("\n"):
        suffix = common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - prefix)
        last_changed = old_text.count("\n", 0, len(old_text) - suffix) + 1  # the same line numbers in new_text
        while after > before and _first_line(body[after - 1]) > last_changed:
            after -= 1
    elif not before:
        return None  # the whole text: the caller's parse
    # The part parsed again: from the line after the last statement kept before (or the first line) to the line
    # before the first statement kept after (or the last line).
    previous_end = _last_line(body[before - 1]) if before else 0
    next_first = _first_line(body[after]) if after < len(body) else new_text.count("\n") + 2
    if previous_end + 1 > next_first - 1:
        return None
    if before < after and (_first_line(body[before]) <= previous_end
                           or _last_line(body[after - 1]) >= next_first):
        return None  # a statement kept and one parsed again share a line (`a = 1; b = 2`)
    start, end = _line_offsets(new_text, previous_end + 1, next_first - 1)
    if start and _continues(new_text, start - 1):
        return None  # the line before the part continues into it
    part = new_text[start:end]
    if "__future__" in part or (end < len(new_text) and _continues(new_text, end - 1)):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as the whole parse (sources/python_source.py)
            parsed = ast.parse("\n" * previous_end + part, type_comments=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return ast.Module(body=[*body[:before], *parsed.body, *body[after:]], type_ignores=[])


def import_lines_differ(old_text: str | None, new_text: str) -> bool:
    """Whether the lines that can import a package (from or import first) differ between the two texts, in
    order: compared only on the lines the change touched (the rest is the same text, and a line-start pattern
    finds there what it found before)."""
    if old_text is None:
        return True
    if old_text == new_text:
        return False
    prefix = common_prefix(old_text, new_text)
    suffix = common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - prefix)
    start = old_text.rfind("\n", 0, prefix) + 1  # the same in new_text
    old_end = old_text.find("\n", len(old_text) - suffix)
    new_end = new_text.find("\n", len(new_text) - suffix)
    old_part = old_text[start:old_end if old_end != -1 else len(old_text)]
    new_part = new_text[start:new_end if new_end != -1 else len(new_text)]
    return _IMPORT_LINE.findall(old_part) != _IMPORT_LINE.findall(new_part)
