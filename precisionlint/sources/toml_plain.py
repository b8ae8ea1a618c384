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

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# A bare key's characters (TOML: A-Za-z0-9_-): a key is bare when stripping them leaves nothing.
_KEY_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
# int() refuses more than 4,300 digits with a ValueError that tomllib lets through: such a number goes to tomllib.
_LONGEST_INTEGER = 20


def parse_plain(text: str) -> dict[str, Any] | None:
    """tomllib.loads(text) for plain TOML, else None (see the module's documentation). Read with string methods,
    not a regular expression: compiling one for this grammar costs half a millisecond, as much as the rest."""
    # TOML refuses control characters other than tab and newline (in comments and strings too); a carriage return
    # (a Windows line end) is left to tomllib, which knows where one is allowed.
    if not text.isascii() or not text.replace("\t", " ").replace("\n", " ").isprintable():
        return None
    root: dict[str, Any] = {}
    table = root
    declared: set[tuple[str, ...]] = set()  # the tables a header named: each may be named once
    for line in text.split("\n"):
        line = line.strip(" \t")
        if not line or line[0] == "#":
            continue
        if line[0] == "[":  # a table header: `[a]`, `[ a . b ]`
            end = line.find("]")
            if end == -1 or not _blank_or_comment(line[end + 1:]):
                return None
            path = tuple(part.strip(" \t") for part in line[1:end].split("."))
            if not all(_bare(part) for part in path) or path in declared:
                return None
            declared.add(path)
            table = root
            for part in path:
                inner = table.setdefault(part, {})
                if not isinstance(inner, dict):  # a header through a value
                    return None
                table = inner
            continue
        key, equals, rest = line.partition("=")
        key = key.rstrip(" \t")
        if not equals or not _bare(key) or key in table:  # not `key = ...`; a key defined twice or naming a table
            return None
        value, after = _value(rest.lstrip(" \t"))
        if value is None or not _blank_or_comment(after):
            return None
        table[key] = value
    return root


def _bare(key: str) -> bool:
    return key != "" and not key.strip(_KEY_CHARACTERS)


def _blank_or_comment(text: str) -> bool:
    text = text.lstrip(" \t")
    return not text or text[0] == "#"


def _value(text: str) -> tuple[str | bool | int | float | None, str]:
    """The plain value at the start of `text` and the text after it; None for anything else."""
    if text[:1] in ("\"", "'"):  # a string on one line, without escapes (`\"\"\"` closes at once: text follows)
        close = text.find(text[0], 1)
        if close == -1 or (text[0] == "\"" and "\\" in text[1:close]):
            return None, ""
        return text[1:close], text[close + 1:]
    end = len(text)
    for index, character in enumerate(text):
        if character in " \t#":
            end = index
            break
    word, after = text[:end], text[end:]
    if word == "true" or word == "false":
        return word == "true", after
    return _number(word), after


def _number(word: str) -> int | float | None:
    """TOML's decimal integer (no leading zero, no underscore) or a float with a fraction or an exponent."""
    digits = word[1:] if word[:1] in ("+", "-") else word
    mantissa, e, exponent = digits.replace("E", "e").partition("e")
    whole, point, fraction = mantissa.partition(".")
    if not whole.isdigit() or (len(whole) > 1 and whole[0] == "0"):
        return None
    if point and not fraction.isdigit():
        return None
    if e and not (exponent[1:] if exponent[:1] in ("+", "-") else exponent).isdigit():
        return None
    if point or e:
        return float(word)
    return int(word) if len(word) <= _LONGEST_INTEGER else None
