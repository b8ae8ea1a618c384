"""A format-neutral tree with source offsets, built by every config loader.

TOML, YAML and JSON each parse with their own library, then convert to this tree so that frameworks.py maps
spellings to canonical settings once, whatever the format. Offsets are character offsets into the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from precisionlint.sources import LimitError

Kind = Literal["map", "seq", "scalar"]


@dataclass
class Node:
    kind: Kind
    start: int
    end: int
    value: Any = None  # scalars only: the Python value
    entries: list[Entry] = field(default_factory=list)  # maps only, in source order
    items: list[Node] = field(default_factory=list)  # sequences only

    def get(self, key: str) -> Entry | None:
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None

    def keys(self) -> set[str]:
        return {entry.key for entry in self.entries}


@dataclass
class Entry:
    key: str
    key_start: int
    key_end: int
    value: Node
    # The whole entry, for removal fixes: [start, end) covering complete lines (and the separating comma in
    # JSON) when the entry stands alone on its lines; None where removing it cleanly is not possible.
    removal: tuple[int, int] | None = None


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


def whole_line_range(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Extend [start, end) to whole lines when only whitespace precedes it on its first line and only
    whitespace or a comment follows it on its last line; None otherwise."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip():
        return None
    line_end = text.find("\n", end)
    tail = text[end : len(text) if line_end == -1 else line_end]
    stripped = tail.strip()
    if stripped and not stripped.startswith("#") and stripped != ",":
        return None
    return line_start, len(text) if line_end == -1 else line_end + 1
