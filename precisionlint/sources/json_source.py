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
from collections.abc import Collection

from precisionlint.core.lines import line_start, line_starts
from precisionlint.core.model import Document
from precisionlint.sources import LimitError, Limits, NotCheckable, SourceError
from precisionlint.sources.tree import Entry, Node, NodeBudget, blank_between, whole_line_range

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER_OR_WORD = re.compile(r"-?[0-9A-Za-z.+\-]+")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")  # json.scanner's NUMBER_RE


def load(path: str, text: str, limits: Limits) -> Document:
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
    root = parse_positions(scanned, NodeBudget(limits.max_nodes, limits.max_depth), duplicates)
    document = Document(path=path, text=text, format="json", tree=root)
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


class _Frame:
    __slots__ = ("node", "pending_key", "pending_key_span", "entry_start", "keys")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.pending_key: str | None = None
        self.pending_key_span = (0, 0)
        self.entry_start = 0
        self.keys: dict[str, list[tuple[int, int]]] | None = None  # key -> (start, end) of each occurrence


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # [ \t\r\n]* always matches


def _string(token: str) -> str:
    """The value of a validated JSON string token; without a backslash it is the text between the quotes."""
    return token[1:-1] if "\\" not in token else json.loads(token)  # type: ignore[no-any-return]


def parse_positions(
    text: str, budget: NodeBudget, duplicates: list[tuple[str, tuple[tuple[int, int], ...]]] | None = None
) -> Node:
    """Positions of an already validated JSON text. A key repeated in one object keeps its last value, as
    json.loads does; each repeated key and the (line, column) of its occurrences go to `duplicates`."""
    stack: list[_Frame] = []
    repeated: list[_Frame] = []  # objects with a repeated key: their members get no removal range
    root: Node | None = None
    pos = _skip(text, 0)

    def attach(node: Node) -> None:
        nonlocal root
        budget.take(len(stack))
        if not stack:
            root = node
            return
        frame = stack[-1]
        if frame.node.kind == "seq":
            frame.node.items.append(node)
        else:
            key = frame.pending_key or ""
            if frame.keys is not None and len(frame.keys[key]) > 1:  # the earlier value is overridden
                frame.node.entries = [entry for entry in frame.node.entries if entry.key != key]
            frame.node.entries.append(Entry(key, frame.pending_key_span[0], frame.pending_key_span[1], node))
            frame.pending_key = None

    while pos < len(text):
        char = text[pos]
        if char in "{[":
            node = Node("map" if char == "{" else "seq", pos, pos)
            attach(node)
            stack.append(_Frame(node))
            pos = _skip(text, pos + 1)
            continue
        if char in "}]":
            frame = stack.pop()
            frame.node.end = pos + 1
            pos = _skip(text, pos + 1)
            if not stack:
                break
            continue
        if char == ",":
            pos = _skip(text, pos + 1)
            continue
        if char == '"':
            match = _STRING.match(text, pos)
            assert match is not None  # validated above
            end = match.end()
            after = _skip(text, end)
            top = stack[-1] if stack else None
            if top is not None and top.node.kind == "map" and top.pending_key is None:
                # A key: the next character is ':'.
                key = _string(match.group())
                if top.keys is None:
                    top.keys = {}
                occurrences = top.keys.setdefault(key, [])
                occurrences.append((pos, end))
                if len(occurrences) == 2 and not any(frame is top for frame in repeated):
                    repeated.append(top)
                top.pending_key = key
                top.pending_key_span = (pos, end)
                pos = _skip(text, after + 1)
                continue
            attach(Node("scalar", pos, end, value=_string(match.group())))
            pos = after
            continue
        match = _NUMBER_OR_WORD.match(text, pos)
        if match is None:  # unreachable for validated input; fail safe rather than loop
            raise SourceError("invalid JSON", *_line_col(text, pos))
        word = match.group()
        attach(Node("scalar", pos, match.end(), value=_scalar(word)))
        pos = _skip(text, match.end())
    if root is None:
        raise SourceError("empty JSON document")
    _set_removals(text, root, budget, {id(frame.node) for frame in repeated})
    if duplicates is not None:
        for frame in repeated:
            assert frame.keys is not None
            for key, occurrences in frame.keys.items():
                if len(occurrences) > 1:
                    duplicates.append((key, tuple(_line_col(text, start) for start, _ in occurrences)))
    return root


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


def _set_removals(text: str, root: Node, budget: NodeBudget, skip: Collection[int] = ()) -> None:
    """Removal range of each object member: its own lines plus the comma that separates it from a neighbour,
    so that deleting the range leaves valid JSON. Members of the objects in `skip` (those with a repeated key,
    whose overridden occurrences are not entries) get none."""
    starts = line_starts(text)  # so that finding an entry's line is a bisection even in minified JSON

    todo = [root]
    while todo:
        node = todo.pop()
        if node.kind == "seq":
            todo.extend(node.items)
            continue
        if node.kind != "map":
            continue
        if id(node) in skip:
            todo.extend(entry.value for entry in node.entries)
            continue
        for index, entry in enumerate(node.entries):
            todo.append(entry.value)
            start, end = entry.key_start, entry.value.end
            if index + 1 < len(node.entries):
                # Remove through the comma after this member, up to the next member's line.
                comma = text.index(",", end)
                nxt = node.entries[index + 1].key_start
                first = line_start(starts, start)
                if blank_between(text, first, start) and "\n" in text[comma:nxt]:
                    entry.removal = (first, line_start(starts, nxt))
                else:
                    entry.removal = (start, nxt)
            elif index > 0:
                # The last member: remove the comma before it instead.
                prev_end = node.entries[index - 1].value.end
                comma = text.index(",", prev_end)
                entry.removal = (comma, end)
            else:
                # The only member: its whole lines when it stands alone on them ("{\n}" stays valid JSON).
                entry.removal = whole_line_range(text, start, end, starts) or (start, end)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1
