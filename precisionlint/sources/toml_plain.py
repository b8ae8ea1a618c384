"""Plain TOML, the kind most training configs are written in, read without importing tomllib.

Importing tomllib (and the datetime, string and typing modules it imports, and the patterns it compiles) is about
4 ms, a tenth of a one-file check of a config. Most configs hold only table headers (`[trainer]`, `[a.b]`) and
`key = value` lines whose values are strings without escapes, decimal numbers and booleans, with comments: this
reads exactly those, to the value tomllib.loads gives them, and answers None for anything else (an array, an inline
table, a dotted or quoted key, a date, an escape, a multi-line string, a character that is not printable ASCII, a
carriage return, a key or table defined twice, a header through a value, ...). Then tomllib parses the text, with
its own errors: this never accepts a text that tomllib refuses, and never gives a value tomllib would not.
"""

from __future__ import annotations

from typing import Any

from precisionlint.core.patterns import lazy_pattern

_KEY = r"[A-Za-z0-9_-]+"
# One line: blank, a comment, a table header or a key with a plain value, each with an optional comment after it.
# A number is TOML's decimal integer (no leading zero, no underscore) or a float with a fraction or an exponent;
# a string has no backslash (no escape) and is not multi-line (`"""x"""` leaves text after `""`: no match).
_LINE = lazy_pattern(
    globals(),
    "_LINE",
    rf"[ \t]*(?:(?P<header>\[[ \t]*{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*[ \t]*\])"
    rf"|(?P<key>{_KEY})[ \t]*=[ \t]*(?P<value>\"[^\"\\]*\"|'[^']*'|true|false"
    r"|[+-]?(?:0|[1-9][0-9]*)(?P<fraction>(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)))?"
    r"[ \t]*(?:#.*)?",
)
# int() refuses more than 4,300 digits with a ValueError that tomllib lets through: such a number goes to tomllib.
_LONGEST_INTEGER = 20


def parse_plain(text: str) -> dict[str, Any] | None:
    """tomllib.loads(text) for plain TOML, else None (see the module's documentation)."""
    # TOML refuses control characters other than tab and newline (in comments and strings too); a carriage return
    # (a Windows line end) is left to tomllib, which knows where one is allowed.
    if not text.isascii() or not text.replace("\t", " ").replace("\n", " ").isprintable():
        return None
    root: dict[str, Any] = {}
    table = root
    declared: set[tuple[str, ...]] = set()  # the tables a header named: each may be named once
    for line in text.split("\n"):
        match = _LINE.fullmatch(line)
        if match is None:
            return None
        header, key, value = match.group("header", "key", "value")
        if header is not None:
            path = tuple(part.strip(" \t") for part in header[1:-1].split("."))
            if path in declared:
                return None
            declared.add(path)
            table = root
            for part in path:
                inner = table.setdefault(part, {})
                if not isinstance(inner, dict):  # a header through a value
                    return None
                table = inner
        elif key is not None:
            if key in table:  # a key defined twice, or a key naming a table a header made
                return None
            if value[0] in "\"'":
                table[key] = value[1:-1]
            elif value == "true" or value == "false":
                table[key] = value == "true"
            elif match.group("fraction"):
                table[key] = float(value)
            elif len(value) <= _LONGEST_INTEGER:
                table[key] = int(value)
            else:
                return None
    return root
