"""The one line index: where each line of a text starts, and a character offset's line and column.

Every position computation goes through here: the loaders' spans, the fixer's edits, the JSON output's edit
locations and the language server's LSP positions. Offsets are character offsets into the text; lines and
columns are 1-based, except `line_index`, which indexes the list of line starts.
"""

from __future__ import annotations

from bisect import bisect_right


def line_starts(text: str) -> list[int]:
    """Offsets at which each line of `text` starts, lines ending at `\\n` only, as the loaders and the output
    count them (universal_line_starts is the variant where `\\r` ends a line too)."""
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def universal_line_starts(text: str) -> list[int]:
    """Offsets where each line starts when `\\n`, `\\r\\n` and a lone `\\r` all end a line, as Python's
    tokenizer and YAML 1.2 count lines."""
    starts = [0]
    pos = 0
    length = len(text)
    while True:
        newline = text.find("\n", pos)
        carriage = text.find("\r", pos, newline if newline != -1 else length)
        if carriage != -1:
            pos = carriage + 2 if text.startswith("\r\n", carriage) else carriage + 1
        elif newline != -1:
            pos = newline + 1
        else:
            return starts
        starts.append(pos)


def parser_line_starts(text: str, fmt: str) -> list[int]:
    """Line starts as the file's own parser counts its lines, and so as its findings do: Python's tokenizer and
    YAML 1.2 end a line at a lone `\\r` too; TOML and JSON end lines at `\\n` only (a lone CR is no line end
    there). `fmt` is a source format name ("python", "yaml", "toml", "json")."""
    if "\r" in text and fmt in ("python", "yaml"):
        return universal_line_starts(text)
    return line_starts(text)


def line_index(starts: list[int], offset: int) -> int:
    """The 0-based index in `starts` of the line that holds `offset` (a bisection, linear in nothing)."""
    return bisect_right(starts, offset) - 1


def line_start(starts: list[int], offset: int) -> int:
    """The offset at which the line holding `offset` starts (`text.rfind("\\n", 0, offset) + 1` for `\\n`
    starts, without the scan)."""
    return starts[bisect_right(starts, offset) - 1]


def position(starts: list[int], offset: int) -> tuple[int, int]:
    """(line, column), both 1-based, of a character offset."""
    index = bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


def line_text(text: str, starts: list[int], index: int) -> str:
    """0-based line `index` of `text` without its line break."""
    end = starts[index + 1] - 1 if index + 1 < len(starts) else len(text)
    return text[starts[index]:end]


def break_at_or_after(starts: list[int], offset: int) -> int:
    """Offset of the first line break at or after `offset`, -1 when none (`text.find("\\n", offset)` for `\\n`
    starts, without the scan): the break before the first line start after `offset`."""
    following = bisect_right(starts, offset)
    return starts[following] - 1 if following < len(starts) else -1


def char_column(line: str, byte_col: int) -> int:
    """0-based character column of a 0-based UTF-8 byte column into `line` (`ast` counts columns in bytes)."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def byte_offset(text: str, starts: list[int], line: int, byte_col: int) -> int:
    """Character offset of a 1-based line and a UTF-8 byte column into it (an `ast` node's position), clamped to
    the text; a line past the last one is the text's end."""
    if line > len(starts):
        return len(text)
    start = starts[max(line, 1) - 1]
    if text[start : start + byte_col + 1].isascii():
        return min(start + byte_col, len(text))
    return start + char_column(text[start : starts[line] if line < len(starts) else None], byte_col)
