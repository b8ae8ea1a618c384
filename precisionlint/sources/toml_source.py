"""TOML with positions.

The standard library's tomllib parses when it exists (Python 3.11+): it is strict TOML 1.0, as the tools that
read these files are, and costs a fraction of tomlkit's import; tomlkit (the round-trip library the fixes
write through) parses on Python 3.10. Neither keeps source positions, so a small scanner walks the validated
text once and records where each key and value is; the two are joined by key path. The scanner only has to
understand valid TOML.
"""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document
from precisionlint.core.patterns import lazy_pattern
from precisionlint.sources import LimitError, Limits, SourceError
from precisionlint.sources.toml_plain import parse_plain
from precisionlint.sources.tree import Entry, Node, NodeBudget, whole_line_range

_BARE_KEY = lazy_pattern(globals(), "_BARE_KEY", r"[A-Za-z0-9_-]+")
_WS = lazy_pattern(globals(), "_WS", r"[ \t]*")
_ERROR_POSITION = lazy_pattern(globals(), "_ERROR_POSITION", r" at line (\d+) col (\d+)$")


_TOMLLIB_POSITION = lazy_pattern(globals(), "_TOMLLIB_POSITION", r" \(at line (\d+), column (\d+)\)$")


def _parse(text: str) -> dict[str, Any]:
    plain = parse_plain(text)  # most configs: without importing tomllib (toml_plain.py says why)
    if plain is not None:
        return plain
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return _parse_with_tomlkit(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOMLLIB_POSITION.search(message)
        line, column = (int(match.group(1)), int(match.group(2))) if match else (1, 1)
        problem = _TOMLLIB_POSITION.sub("", message)
        if problem.startswith(("Cannot overwrite", "Cannot declare")):
            # tomllib points after the repeated value; the key at the start of the line is what to fix.
            lines = text.split("\n")
            if 0 < line <= len(lines):
                column = len(lines[line - 1]) - len(lines[line - 1].lstrip(" \t")) + 1
            problem = f"a key or table is defined twice ({problem.lower()})"
        raise SourceError(f"invalid TOML: {problem}", line, column) from None


def load(path: str, text: str, limits: Limits) -> Document:
    try:
        parsed = _parse(text)
    except RecursionError:
        raise LimitError("nesting too deep to parse") from None
    budget = NodeBudget(limits.max_nodes, limits.max_depth)
    scanner = _Scanner(text)
    scanner.scan()
    root = _build(parsed, (), scanner.positions, budget, 0, (0, len(text)), text)
    return Document(path=path, text=text, format="toml", tree=root)


def _parse_with_tomlkit(text: str) -> dict[str, Any]:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text).unwrap()
    except ParseError as exc:
        message = _ERROR_POSITION.sub("", str(exc))
        raise SourceError(f"invalid TOML: {message}", exc.line, exc.col) from None
    except RecursionError:
        raise LimitError("nesting too deep to parse") from None
    except Exception as exc:  # tomlkit raises a few non-ParseError types on odd input
        line, column = _duplicate_position(text, str(exc))
        raise SourceError(f"invalid TOML: {exc}", line, column) from None


_DUPLICATE = lazy_pattern(globals(), "_DUPLICATE", r'^Key "(.*)" already exists\.$')
_LINE_KEY = lazy_pattern(
    globals(), "_LINE_KEY", r"""[ \t]*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))[ \t]*[=.]""")


def _duplicate_position(text: str, message: str) -> tuple[int, int]:
    """Where a key repeats within one table, for tomlkit's KeyAlreadyPresent, which carries no position."""
    match = _DUPLICATE.match(message)
    if match is None:
        return 1, 1
    key = match.group(1)
    seen = False
    for number, line in enumerate(text.split("\n"), start=1):
        if line.lstrip().startswith("["):
            seen = False  # a new table
            continue
        found = _LINE_KEY.match(line)
        if found is None or key not in found.groups():
            continue
        if seen:
            start = found.start(found.lastindex or 0)
            if found.lastindex in (1, 2):  # a quoted key: point at its opening quote
                start -= 1
            return number, start + 1
        seen = True
    return 1, 1


# key path -> (key_start, key_end, value_start, value_end, removal)
if TYPE_CHECKING:
    from typing import Any

    Positions = dict[tuple[Any, ...], tuple[int, int, int, int, "tuple[int, int] | None"]]
else:
    Positions = dict  # at run time only annotations name the type (core/light_typing.py)


def _build(
    value: Any, path: tuple[Any, ...], positions: Positions, budget: NodeBudget, depth: int, span: tuple[int, int],
    text: str = "",
) -> Node:
    budget.take(depth)
    if isinstance(value, dict):
        node = Node("map", span[0], span[1])
        for key, child in value.items():
            where = positions.get((*path, key))
            if where is None:  # implicit super-table or a position the scanner could not place
                k_start = k_end = v_start = v_end = span[0]
                removal = None
            else:
                k_start, k_end, v_start, v_end, removal = where
            child_node = _build(child, (*path, key), positions, budget, depth + 1, (v_start, v_end), text)
            node.entries.append(Entry(str(key), k_start, k_end, child_node, removal))
        return node
    if isinstance(value, list):
        node = Node("seq", span[0], span[1])
        for index, child in enumerate(value):
            where = positions.get((*path, index))
            child_span = (where[2], where[3]) if where else span
            node.items.append(_build(child, (*path, index), positions, budget, depth + 1, child_span, text))
        return node
    if not isinstance(value, (str, int, float, bool)) and value is not None:
        # A date or time: messages show it as written in the file, never as a Python repr
        # (datetime.datetime(1979, 5, 27, ...)); no setting takes one, so no rule compares it as a date.
        value = text[span[0]:span[1]].strip() or (value.isoformat() if hasattr(value, "isoformat") else str(value))
    return Node("scalar", span[0], span[1], value=value)


class _Scanner:
    """Records positions of keys and values in valid TOML text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.positions: Positions = {}
        self.aot_counts: dict[tuple[Any, ...], int] = {}

    def scan(self) -> None:
        text = self.text
        table: tuple[Any, ...] = ()
        while self.pos < len(text):
            self._skip_blank_and_comments()
            if self.pos >= len(text):
                break
            if text.startswith("[[", self.pos):
                start = self.pos
                keys, end = self._keys(self.pos + 2)
                base = tuple(keys)
                index = self.aot_counts.get(base, -1) + 1
                self.aot_counts[base] = index
                table = self._resolve(base) + (index,)
                self.positions.setdefault(self._resolve(base), (start, end, start, end, None))
                self.pos = self._line_end(end)
            elif text[self.pos] == "[":
                start = self.pos
                keys, end = self._keys(self.pos + 1)
                table = self._resolve(tuple(keys))
                self.positions[table] = (start, end, start, end, None)
                self.pos = self._line_end(end)
            else:
                self._key_value(table, inline=False)
                self.pos = self._line_end(self.pos)

    def _resolve(self, keys: tuple[Any, ...]) -> tuple[Any, ...]:
        """A table header names the latest element of any array of tables on its path."""
        resolved: tuple[Any, ...] = ()
        for key in keys:
            resolved = (*resolved, key)
            if resolved in self.aot_counts:
                resolved = (*resolved, self.aot_counts[resolved])
        return resolved

    def _key_value(self, table: tuple[Any, ...], inline: bool) -> None:
        text = self.text
        key_start = self.pos
        keys, key_end = self._keys(self.pos)
        self.pos = self._skip_ws(key_end)
        # valid TOML: '=' is here
        self.pos = self._skip_ws(self.pos + 1)
        value_start = self.pos
        path = (*table, *keys)
        self._value(path)
        value_end = self.pos
        removal = None if inline else whole_line_range(text, key_start, value_end)
        self.positions[path] = (key_start, key_end, value_start, value_end, removal)

    def _value(self, path: tuple[Any, ...]) -> None:
        text = self.text
        char = text[self.pos]
        if text.startswith('"""', self.pos) or text.startswith("'''", self.pos):
            quote = text[self.pos : self.pos + 3]
            end = self.pos + 3
            while True:
                end = text.index(quote, end)
                if quote == '"""' and _escaped(text, end):
                    end += 1
                    continue
                break
            end += 3
            while end < len(text) and text[end] == quote[0]:  # up to two extra quotes belong to the string
                end += 1
            self.pos = end
        elif char == '"':
            end = self.pos + 1
            while text[end] != '"' or _escaped(text, end):
                end += 1
            self.pos = end + 1
        elif char == "'":
            self.pos = text.index("'", self.pos + 1) + 1
        elif char == "[":
            self.pos += 1
            index = 0
            while True:
                self._skip_blank_and_comments()
                if text[self.pos] == "]":
                    self.pos += 1
                    break
                if text[self.pos] == ",":
                    self.pos += 1
                    continue
                start = self.pos
                item_path = (*path, index)
                self._value(item_path)
                self.positions[item_path] = (start, start, start, self.pos, None)
                index += 1
        elif char == "{":
            self.pos = self._skip_ws(self.pos + 1)
            while text[self.pos] != "}":
                if text[self.pos] == ",":
                    self.pos = self._skip_ws(self.pos + 1)
                    continue
                self._key_value(path, inline=True)
                self.pos = self._skip_ws(self.pos)
            self.pos += 1
        else:
            end = self.pos
            while end < len(text) and text[end] not in ",]}#\n\r":
                end += 1
            # Dates may contain a space ("1979-05-27 07:32:00"); trailing spaces are not part of the value.
            while end > self.pos and text[end - 1] in " \t":
                end -= 1
            self.pos = end

    def _keys(self, pos: int) -> tuple[list[str], int]:
        text = self.text
        keys: list[str] = []
        pos = self._skip_ws(pos)
        while True:
            if text[pos] == '"':
                end = pos + 1
                while text[end] != '"' or _escaped(text, end):
                    end += 1

                keys.append(_basic_string(text[pos : end + 1]))
                pos = end + 1
            elif text[pos] == "'":
                end = text.index("'", pos + 1)
                keys.append(text[pos + 1 : end])
                pos = end + 1
            else:
                match = _BARE_KEY.match(text, pos)
                if match is None:
                    raise SourceError("invalid TOML key", *_line_col(text, pos))
                keys.append(match.group())
                pos = match.end()
            after = self._skip_ws(pos)
            if after < len(text) and text[after] == ".":
                pos = self._skip_ws(after + 1)
                continue
            if after < len(text) and text[after] == "]":
                after += 1
                if after < len(text) and text[after] == "]":
                    after += 1
                return keys, after
            return keys, pos

    def _skip_ws(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        return match.end() if match else pos

    def _skip_blank_and_comments(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n":
                self.pos += 1
            elif char == "#":
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline == -1 else newline + 1
            else:
                return

    def _line_end(self, pos: int) -> int:
        newline = self.text.find("\n", pos)
        return len(self.text) if newline == -1 else newline + 1


def _basic_string(quoted: str) -> str:
    """A TOML basic string's value; JSON's escapes are TOML's but for \\U (8 hex digits), rare in keys."""
    if "\\" not in quoted:
        return quoted[1:-1]
    import json  # only for keys with escapes: not worth importing on every check

    return str(json.loads(quoted.replace("\\U", "\\u")))


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    index -= 1
    while index >= 0 and text[index] == "\\":
        backslashes += 1
        index -= 1
    return backslashes % 2 == 1


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1
