"""A format-neutral tree with source offsets, built by every config loader.

TOML, YAML and JSON each parse with their own library, then convert to this tree so that frameworks.py maps
spellings to canonical settings once, whatever the format. Offsets are character offsets into the text.
"""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.lines import break_at_or_after, line_start
from precisionlint.core.patterns import lazy_pattern
from precisionlint.sources import LimitError

if TYPE_CHECKING:
    from typing import Any, Literal

    Kind = Literal["map", "seq", "scalar"]
else:
    Kind = str  # one of those names: at run time only annotations name the type (core/light_typing.py)


class Node:
    __slots__ = ("kind", "start", "end", "value", "entries", "items")

    def __init__(
        self,
        kind: Kind,
        start: int,
        end: int,
        value: Any = None,  # scalars only: the Python value
        entries: list[Entry] | None = None,  # maps only, in source order
        items: list[Node] | None = None,  # sequences only
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.value = value
        self.entries: list[Entry] = entries if entries is not None else []
        self.items: list[Node] = items if items is not None else []

    def __repr__(self) -> str:
        return f"Node({self.kind}, {self.start}, {self.end})"

    def get(self, key: str) -> Entry | None:
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None

    def keys(self) -> set[str]:
        return {entry.key for entry in self.entries}

    def child_maps(self) -> list[Entry]:
        """The entries whose value is a map, in order: the sections a walk over a config descends into (a big
        JSON container answers without building its members when it holds no map: json_source._Container)."""
        return [entry for entry in self.entries if entry.value.kind == "map"]


class Entry:
    """A key and its value. `removal` is the whole entry, for removal fixes: [start, end) covering complete
    lines (and the separating comma in JSON) when the entry stands alone on its lines; None where removing it
    cleanly is not possible."""

    __slots__ = ("key", "key_start", "key_end", "value", "removal")

    def __init__(
        self, key: str, key_start: int, key_end: int, value: Node, removal: tuple[int, int] | None = None
    ) -> None:
        self.key = key
        self.key_start = key_start
        self.key_end = key_end
        self.value = value
        self.removal = removal

    def __repr__(self) -> str:
        return f"Entry({self.key!r}, {self.key_start}, {self.value!r})"


class NodeBudget:
    """Counts nodes built or walked; exceeding the budget is a LimitError (YAML alias bombs, huge files)."""

    def __init__(self, max_nodes: int, max_depth: int) -> None:
        self.remaining = max_nodes
        self.max_nodes = max_nodes
        self.max_depth = max_depth

    def take(self, depth: int) -> None:
        self.remaining -= 1
        if self.remaining < 0:
            raise LimitError(f"more than {self.max_nodes:,} nodes (max-nodes)")
        if depth > self.max_depth:
            raise LimitError(f"nesting deeper than {self.max_depth} levels (max-depth)")


_NONBLANK = lazy_pattern(globals(), "_NONBLANK", r"\S")


def roots(tree: Any) -> list[Any]:
    """A document's top-level nodes: a YAML file holds a list of documents, the other formats one tree or None
    (an empty file)."""
    if tree is None:
        return []
    return list(tree) if isinstance(tree, list) else [tree]


def root_map(tree: Any) -> Node | None:
    """The top-level mapping of a file that holds exactly one document, or None."""
    found = roots(tree)
    if len(found) != 1 or getattr(found[0], "kind", None) != "map":
        return None
    return found[0]


def blank_between(text: str, start: int, end: int) -> bool:
    """`not text[start:end].strip()`, without copying the slice (a long single line makes copies quadratic)."""
    return _NONBLANK.search(text, start, end) is None


def whole_line_range(
    text: str, start: int, end: int, line_starts: list[int] | None = None
) -> tuple[int, int] | None:
    """Extend [start, end) to whole lines when only whitespace precedes it on its first line and only
    whitespace or a comment follows it on its last line; None otherwise.

    `line_starts` (offsets after each "\n", from 0) makes finding the line's ends a bisection instead of a
    scan; with the slices avoided too, a long single line (minified JSON) costs no quadratic time."""
    if line_starts is None:
        begin = text.rfind("\n", 0, start) + 1
    else:
        begin = line_start(line_starts, start)
    if not blank_between(text, begin, start):
        return None
    line_end = text.find("\n", end) if line_starts is None else break_at_or_after(line_starts, end)
    stop = len(text) if line_end == -1 else line_end
    # What follows on the last line: nothing, a comment, or a lone separating comma.
    first = _NONBLANK.search(text, end, stop)
    if first is not None and first.group() != "#":
        if first.group() != "," or not blank_between(text, first.end(), stop):
            return None
    return begin, len(text) if line_end == -1 else line_end + 1
