"""JSON with positions.

The standard library validates and decodes (fast, exact error positions); a small iterative scanner then
walks the same text once more to record where every key and value starts and ends. It is iterative so that
deeply nested input cannot exhaust the stack, and it counts nodes against the per-file budget.

A key repeated in one object keeps its last value, as Python's json (which the Transformers Trainer,
Accelerate and Coqui TTS use) reads it; the repetition is reported by the duplicate-key rule, as an error in a
DeepSpeed config, whose loader refuses it. JSON with comments (`//`, `/* */`) is read as its readers read it:
DeepSpeed loads config files with hjson and Coqui TTS strips comments, so a file that is valid JSON once its
comments are blanked is checked, with every position unchanged.
"""

from __future__ import annotations

import json
import re

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.lines import line_start, line_starts
from precisionlint.core.model import Document
from precisionlint.sources import LimitError, Limits, NotCheckable, SourceError
from precisionlint.sources.tree import Entry, Kind, Node, NodeBudget, blank_between, whole_line_range

if TYPE_CHECKING:
    from typing import Any

_WS = re.compile(r"[ \t\r\n]*")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")  # json.scanner's NUMBER_RE


def load(path: str, text: str, limits: Limits) -> Document:
    document = _load_scanned_first(path, text, limits)
    if document is not None:
        return document
    scanned = text
    try:
        json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        scanned = _validated_without_comments(text, exc)
    except RecursionError:
        raise LimitError("nesting too deep to parse") from None
    except ValueError as exc:
        raise SourceError(f"invalid JSON: {exc}") from None
    duplicates: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    shared = _Removals(scanned)
    root = parse_positions(scanned, NodeBudget(limits.max_nodes, limits.max_depth), duplicates, shared)
    document = Document(path=path, text=text, format="json", tree=root)
    shared.document = document
    document.duplicate_keys = duplicates
    return document


def _load_scanned_first(path: str, text: str, limits: Limits) -> Document | None:
    """The Document of valid JSON, scanned before it is validated, so that the big containers the scan leaves
    unbuilt (validated by the C decoder as it measures them) are not decoded twice: json.loads then validates the
    rest, the text with each of them replaced by `0` (replacing a value by another keeps JSON valid, and each
    of them is a value). None when the scan or that validation fails: load() then validates first and reports
    what is wrong, as it always did (a broken file, comments, a template, a limit)."""
    duplicates: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    shared = _Removals(text)
    try:
        root = parse_positions(text, NodeBudget(limits.max_nodes, limits.max_depth), duplicates, shared)
        rest: list[str] = []
        start = 0
        for begin, end in shared.unbuilt:
            rest += (text[start:begin], "0")
            start = end
        json.loads("".join(rest) + text[start:] if rest else text, parse_constant=_reject_constant)
    except Exception:  # any failure: the careful path decides (an error, a limit, comments, a template)
        return None
    shared.unbuilt = []
    document = Document(path=path, text=text, format="json", tree=root)
    shared.document = document
    document.duplicate_keys = duplicates
    return document


# JSON with comments (JSONC): `//` line and `/* */` block comments outside strings. Many readers of training
# configs accept them: DeepSpeed reads a config file with hjson, Coqui TTS strips them before json.loads, and
# editors' settings use them. A file that is valid once they are blanked is checked, not reported as broken.
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/')
_NOT_NEWLINE = re.compile(r"[^\n]")


def without_comments(text: str) -> str | None:
    """`text` with every JSONC comment replaced by spaces (line breaks kept, so every position stays the
    same), or None when it has no comment."""
    if "/" not in text:
        return None
    found = False

    def blank(match: re.Match[str]) -> str:
        nonlocal found
        token = match.group()
        if token.startswith('"'):
            return token
        found = True
        return _NOT_NEWLINE.sub(" ", token)

    blanked = _STRING_OR_COMMENT.sub(blank, text)
    return blanked if found else None


# Where a value should start, a placeholder that a launcher substitutes (`sed s/CONFIG_BATCH_SIZE/$bs/`, as
# Megatron-DeepSpeed's ds_config templates are filled), a shell or Jinja variable: the file is a template.
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\$\{?[A-Za-z_]\w*\}?|\{\{|<[A-Z][A-Z0-9_]*>")


def _validated_without_comments(text: str, error: json.JSONDecodeError) -> str:
    """The comment-free text to scan for positions, when comments are all that made `text` invalid JSON;
    otherwise the original error (or NotCheckable for a template)."""
    blanked = without_comments(text)
    if blanked is not None:
        try:
            json.loads(blanked, parse_constant=_reject_constant)
            return blanked
        except json.JSONDecodeError as second:
            error = second
        except (RecursionError, ValueError):
            pass
    if error.msg == "Expecting value" and _PLACEHOLDER.match(error.doc, error.pos):
        raise NotCheckable("a template: a placeholder stands where a value should be") from None
    if error.msg == "Extra data" and _value_stream(error.doc, error.pos):
        raise NotCheckable("a stream of JSON records, one after another: data, not a config") from None
    raise SourceError(f"invalid JSON: {error.msg}", error.lineno, error.colno) from None


# Records written one after another (`{...}\n{...}\n{...}`), each on one line (JSON Lines, also recognised
# before parsing: sources.not_config) or pretty-printed over many (CodeGeeX's MindSpore tuning banks,
# repository_ascend910ProA_matmul.json). No config reader takes such a file (json.load stops at "Extra data");
# its own reader reads record by record. Two values may be a config pasted twice, a real mistake: from three on
# the file is a stream of records.
_STREAM_VALUES = 3


def _value_stream(text: str, end_of_first: int) -> bool:
    """Whether `text`, whose first JSON value ends at `end_of_first`, holds at least _STREAM_VALUES objects or
    arrays one after another (the first included)."""
    if text.lstrip()[:1] not in ("{", "["):
        return False
    decoder = json.JSONDecoder()
    position, count = end_of_first, 1
    while count < _STREAM_VALUES:
        position = _skip(text, position)
        if text[position:position + 1] not in ("{", "["):
            return False
        try:
            _, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            return False
        count += 1
    return True


def _reject_constant(name: str) -> float:
    # NaN/Infinity are not JSON (RFC 8259); Python accepts them, DeepSpeed's loader would too, so allow them.
    return float(name.lower().replace("infinity", "inf"))


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # [ \t\r\n]* always matches


# The scan reads the common shapes with one match each: an object member whose value is a scalar, with the comma
# after it (or its key alone, when an object or an array follows), and an array item that is a scalar. So a
# 20 MB config costs a few times json.loads, not a Python step for every token.
_MEMBER = re.compile(
    r'"((?:[^"\\]|\\.)*)"[ \t\r\n]*:[ \t\r\n]*'
    r'(?:(?:("(?:[^"\\]|\\.)*")|(-?[0-9A-Za-z.+\-]+))[ \t\r\n]*(?:,[ \t\r\n]*)?)?',
    re.DOTALL,
)
_ITEM = re.compile(r'(?:("(?:[^"\\]|\\.)*")|(-?[0-9A-Za-z.+\-]+))[ \t\r\n]*(?:,[ \t\r\n]*)?', re.DOTALL)
_AFTER_CONTAINER = re.compile(r"[ \t\r\n]*(?:,[ \t\r\n]*)?")


class _Leaf(Node):
    """A scalar: a Node without the two empty lists that every Node carries (most of a scalar's memory)."""

    __slots__ = ()
    entries = ()  # type: ignore[assignment]
    items = ()  # type: ignore[assignment]

    def __init__(self, start: int, end: int, value: Any) -> None:  # noqa: D107  (no super().__init__: no lists)
        self.kind = "scalar"
        self.start = start
        self.end = end
        self.value = value


class _Removals:
    """What the removal ranges of a file's members are computed from, shared by all its entries."""

    __slots__ = ("text", "_starts", "document", "unbuilt")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self.unbuilt: list[tuple[int, int]] = []  # where the scan left containers unbuilt, in text order
        self.document: Document | None = None  # whose line starts these are too (the same lines: comments
        # are blanked with their line breaks kept), so that the file is indexed once

    @property
    def starts(self) -> list[int]:
        if self._starts is None:  # finding a line is a bisection even in minified JSON
            self._starts = self.document.line_starts if self.document is not None else line_starts(self.text)
        return self._starts


_UNSET: Any = object()


class _JsonEntry(Entry):
    """An object member whose removal range is computed when first asked for, with those of its siblings: most
    members of a big file (a vocabulary) are never removed, and each range costs a scan and a tuple."""

    __slots__ = ("_removal", "_parent", "_shared")

    def __init__(self, key: str, key_start: int, key_end: int, value: Node, parent: Node, shared: _Removals) -> None:
        self.key = key
        self.key_start = key_start
        self.key_end = key_end
        self.value = value
        self._removal = _UNSET
        self._parent = parent
        self._shared = shared

    @property  # type: ignore[override]
    def removal(self) -> tuple[int, int] | None:
        if self._removal is _UNSET:
            _set_removals(self._shared, self._parent)
        return self._removal  # type: ignore[no-any-return]

    @removal.setter
    def removal(self, value: tuple[int, int] | None) -> None:
        self._removal = value


_NODE_ENTRIES: Any = Node.__dict__["entries"]  # the slots themselves, under the properties of _Container
_NODE_ITEMS: Any = Node.__dict__["items"]


class _Container(Node):
    """An object or an array. A big one (a vocabulary, a merges list: more than _LAZY_AFTER members) is left
    unbuilt by the scan, once the C decoder has validated it, counted its nodes and depth against the limits and
    found no repeated key in it: its members are built, exactly as the scan builds them, when first asked for.
    Most of a big config's bulk is read by nothing (its settings are a few sections near the top)."""

    __slots__ = ("_shared", "_keys", "_maps")

    def __init__(self, kind: Kind, start: int) -> None:
        self._shared: _Removals | None = None  # set while the members are unbuilt
        self._keys: frozenset[str] = frozenset()  # while unbuilt: an object's keys
        self._maps = True  # while unbuilt: whether it holds an object anywhere
        super().__init__(kind, start, start)

    @property  # type: ignore[override]
    def entries(self) -> list[Entry]:
        if self._shared is not None and self.kind == "map":
            self._build()
        return _NODE_ENTRIES.__get__(self)  # type: ignore[no-any-return]

    @entries.setter
    def entries(self, value: list[Entry]) -> None:
        _NODE_ENTRIES.__set__(self, value)

    @property  # type: ignore[override]
    def items(self) -> list[Node]:
        if self._shared is not None and self.kind == "seq":
            self._build()
        return _NODE_ITEMS.__get__(self)  # type: ignore[no-any-return]

    @items.setter
    def items(self, value: list[Node]) -> None:
        _NODE_ITEMS.__set__(self, value)

    def get(self, key: str) -> Entry | None:
        if self._shared is not None and (self.kind != "map" or key not in self._keys):
            return None
        return super().get(key)

    def keys(self) -> set[str]:
        if self._shared is not None:
            return set(self._keys)
        return super().keys()

    def child_maps(self) -> list[Entry]:
        if self._shared is not None and not self._maps:
            return []
        return super().child_maps()

    def _build(self) -> None:
        shared, self._shared, self._keys = self._shared, None, frozenset()
        assert shared is not None
        unlimited = NodeBudget(1 << 62, 1 << 62)  # counted and measured when it was left unbuilt
        _scan(shared.text, self.start, unlimited, shared, [], self, lazy=False)


class _Frame:
    __slots__ = ("node", "map", "pending_key", "pending_key_span", "count", "remaining")

    def __init__(self, node: Node, remaining: int) -> None:
        self.node = node
        self.map = node.kind == "map"
        self.pending_key: str | None = None
        self.pending_key_span = (0, 0)
        self.count = 0  # members scanned so far
        self.remaining = remaining  # the node budget left when the container was entered


def _string(token: str) -> str:
    """The value of a validated JSON string token; without a backslash it is the text between the quotes."""
    return token[1:-1] if "\\" not in token else json.loads(token)  # type: ignore[no-any-return]


def _word(word: str) -> object:
    return int(word) if word.isdigit() else _scalar(word)  # validated: digits alone are a JSON integer


# A container with more members than this is measured by the C decoder and built when first read (_Container).
_LAZY_AFTER = 2000


def parse_positions(
    text: str, budget: NodeBudget, duplicates: list[tuple[str, tuple[tuple[int, int], ...]]] | None = None,
    shared: _Removals | None = None,
) -> Node:
    """Positions of an already validated JSON text. A key repeated in one object keeps its last value, as
    json.loads does; each repeated key and the (line, column) of its occurrences go to `duplicates`."""
    repeated: list[tuple[int, list[Entry]]] = []  # objects with a repeated key: where it first repeats, members
    if shared is None:
        shared = _Removals(text)
    root = _scan(text, _skip(text, 0), budget, shared, repeated, None, lazy=True)
    repeated.sort(key=lambda found: found[0])
    for _, occurrences in repeated:
        positions: dict[str, list[int]] = {}
        for entry in occurrences:
            entry.removal = None  # an object with a repeated key: its members get no removal range
            positions.setdefault(entry.key, []).append(entry.key_start)
        if duplicates is not None:
            for key, starts in positions.items():
                if len(starts) > 1:
                    duplicates.append((key, tuple(_line_col(text, start) for start in starts)))
    return root


def _scan(
    text: str, pos: int, budget: NodeBudget, shared: _Removals, repeated: list[tuple[int, list[Entry]]],
    into: _Container | None, lazy: bool,
) -> Node:
    """The tree of the JSON value at `pos`; or, with `into`, the members of that unbuilt container (at `pos`)."""
    stack: list[_Frame] = []
    root: Node | None = into
    size = len(text)
    member, item, after_container = _MEMBER.match, _ITEM.match, _AFTER_CONTAINER.match
    max_depth = budget.max_depth
    top: _Frame | None = None
    entries: list[Entry] = []
    items: list[Node] = []
    if into is not None:
        top = _Frame(into, budget.remaining)
        stack.append(top)
        entries, items = into.entries, into.items
        pos = _skip(text, pos + 1)
    while pos < size:
        if top is not None:
            if lazy and top.count >= _LAZY_AFTER and len(stack) > 1:
                measured = _measured(text, top, len(stack) - 1, budget)
                if measured is not None:  # left unbuilt: go on after it, as after its closing bracket
                    stack.pop()
                    node = top.node
                    assert isinstance(node, _Container)
                    end, node._keys, node._maps = measured
                    node.end = end
                    node.entries, node.items = [], []
                    node._shared = shared
                    while shared.unbuilt and shared.unbuilt[-1][0] > node.start:
                        shared.unbuilt.pop()  # a big container inside this one, left unbuilt before it
                    shared.unbuilt.append((node.start, end))
                    pos = after_container(text, end).end()  # type: ignore[union-attr]  # always matches
                    top = stack[-1]
                    entries, items = top.node.entries, top.node.items
                    continue
                top.count = -(1 << 62)  # measured once: it stays built
            # The common shapes first, one match each (see _MEMBER), in a loop of their own: most of a big file.
            deep = len(stack) > max_depth
            remaining = budget.remaining
            count = 0
            if top.map:
                parent, add = top.node, entries.append
                while (match := member(text, pos)) is not None:
                    inner, token, word = match.groups()
                    key = inner if "\\" not in inner else json.loads('"' + inner + '"')
                    if token is not None:
                        start, end = match.span(2)
                        leaf = _Leaf(start, end, token[1:-1] if "\\" not in token else json.loads(token))
                    elif word is not None:
                        start, end = match.span(3)
                        leaf = _Leaf(start, end, int(word) if word.isdigit() else _scalar(word))
                    else:  # an object or an array follows
                        top.pending_key = key
                        top.pending_key_span = (pos, match.end(1) + 1)
                        pos = match.end()
                        break
                    remaining -= 1
                    if remaining < 0 or deep:
                        budget.remaining = remaining + 1
                        budget.take(len(stack))  # raises the limit's own error
                    add(_JsonEntry(key, pos, match.end(1) + 1, leaf, parent, shared))
                    pos = match.end()
                    count += 1
                    if count >= _LAZY_AFTER:
                        break
            else:
                add_item = items.append
                while (match := item(text, pos)) is not None:
                    token, word = match.groups()
                    if token is not None:
                        leaf = _Leaf(pos, match.end(1), token[1:-1] if "\\" not in token else json.loads(token))
                    else:
                        leaf = _Leaf(pos, match.end(2), int(word) if word.isdigit() else _scalar(word))
                    remaining -= 1
                    if remaining < 0 or deep:
                        budget.remaining = remaining + 1
                        budget.take(len(stack))
                    add_item(leaf)
                    pos = match.end()
                    count += 1
                    if count >= _LAZY_AFTER:
                        break
            budget.remaining = remaining
            top.count += count
            if count >= _LAZY_AFTER:
                continue
            if pos >= size:
                break
        char = text[pos]
        if char == "{" or char == "[":
            node = _Container("map" if char == "{" else "seq", pos)
            budget.take(len(stack))
            if top is None:
                root = node
            else:
                top.count += 1
                if top.map:
                    entries.append(_JsonEntry(top.pending_key or "", top.pending_key_span[0],
                                              top.pending_key_span[1], node, top.node, shared))
                    top.pending_key = None
                else:
                    items.append(node)
            top = _Frame(node, budget.remaining)
            stack.append(top)
            entries, items = node.entries, node.items
            pos = _skip(text, pos + 1)
            continue
        if top is not None and (char == "}" or char == "]"):
            frame = stack.pop()
            frame.node.end = pos + 1
            if frame.map:
                _close_object(frame.node, repeated)
            pos = after_container(text, pos + 1).end()  # type: ignore[union-attr]  # always matches
            if not stack:
                break
            top = stack[-1]
            entries, items = top.node.entries, top.node.items
            continue
        if top is None:  # a scalar document
            match = item(text, pos)
            if match is None:
                raise SourceError("invalid JSON", *_line_col(text, pos))
            token = match.group(1)
            budget.take(0)
            if token is not None:
                return Node("scalar", pos, match.end(1), value=_string(token))
            return Node("scalar", pos, match.end(2), value=_word(match.group(2)))
        # Unreachable for validated input (every value, key and separator is matched above); fail safe.
        raise SourceError("invalid JSON", *_line_col(text, pos))
    if root is None:
        raise SourceError("empty JSON document")
    return root


class _Repeated(Exception):
    """A key repeated in one object: the container is built by the scan, which reports it."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Repeated()
    return found


_MEASURING = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_reject_constant)


def _measured(text: str, frame: _Frame, depth: int, budget: NodeBudget) -> tuple[int, frozenset[str], bool] | None:
    """The big container of `frame` (at `depth`) measured by the C decoder: its end, its keys (an object's) and
    whether it holds an object, with its nodes counted against the budget as the scan would count them. None
    (the scan goes on building it, and reports what it finds) when it repeats a key or is over a limit."""
    node = frame.node
    try:
        value, end = _MEASURING.raw_decode(text, node.start)
    except (_Repeated, ValueError, RecursionError):
        return None
    nodes, levels, maps = _size(value)
    if nodes > frame.remaining or depth + levels > budget.max_depth:
        return None
    budget.remaining = frame.remaining - nodes
    return end, frozenset(value) if type(value) is dict else frozenset(), maps


def _size(value: Any) -> tuple[int, int, bool]:
    """Values inside a decoded container (keys are not nodes), its nesting below it (1: scalars only), and
    whether an object is among them."""
    nodes, levels, maps = 0, 1, False
    todo = [(value, 1)]
    while todo:
        current, level = todo.pop()
        members = current.values() if type(current) is dict else current
        nodes += len(members)
        for child in members:
            if type(child) is dict or type(child) is list:
                todo.append((child, level + 1))
                levels = max(levels, level + 1)
                maps = maps or type(child) is dict
    return nodes, levels, maps


def _close_object(node: Node, repeated: list[tuple[int, list[Entry]]]) -> None:
    """A key repeated in the object just closed keeps its last value (as json.loads reads it): the members are
    each key's last occurrence, in the order of those occurrences. Every occurrence is remembered for the
    duplicate report, with where the object's first repetition stands (the report's order)."""
    entries = node.entries
    if len(entries) < 2:
        return
    last = {entry.key: index for index, entry in enumerate(entries)}
    if len(last) == len(entries):
        return
    seen: set[str] = set()
    first_repeat = 0
    for entry in entries:
        if entry.key in seen:
            first_repeat = entry.key_start
            break
        seen.add(entry.key)
    repeated.append((first_repeat, list(entries)))
    node.entries = [entry for index, entry in enumerate(entries) if last[entry.key] == index]


def _scalar(word: str) -> object:
    if word == "true":
        return True
    if word == "false":
        return False
    if word == "null":
        return None
    number = _JSON_NUMBER.fullmatch(word)
    if number is not None:  # as json.loads reads it: an int unless it has a fraction or an exponent
        return float(word) if number.group(1) or number.group(2) else int(word)
    try:
        return json.loads(word)
    except ValueError:
        return float(word.lower().replace("infinity", "inf"))


def _set_removals(shared: _Removals, node: Node) -> None:
    """Removal range of each member of the object `node`: its own lines plus the comma that separates it from a
    neighbour, so that deleting the range leaves valid JSON. (An object with a repeated key has its members'
    ranges set to None by the scan: its overridden occurrences are not entries.)"""
    text = shared.text
    entries = node.entries
    for index, entry in enumerate(entries):
        if entry._removal is not _UNSET:  # type: ignore[attr-defined]
            continue
        start, end = entry.key_start, entry.value.end
        if index + 1 < len(entries):
            # Remove through the comma after this member, up to the next member's line.
            comma = text.index(",", end)
            nxt = entries[index + 1].key_start
            starts = shared.starts
            first = line_start(starts, start)
            if blank_between(text, first, start) and "\n" in text[comma:nxt]:
                entry.removal = (first, line_start(starts, nxt))
            else:
                entry.removal = (start, nxt)
        elif index > 0:
            # The last member: remove the comma before it instead.
            prev_end = entries[index - 1].value.end
            comma = text.index(",", prev_end)
            entry.removal = (comma, end)
        else:
            # The only member: its whole lines when it stands alone on them ("{\n}" stays valid JSON).
            entry.removal = whole_line_range(text, start, end, shared.starts) or (start, end)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1
