"""YAML with positions, through ruamel.yaml's round-trip loader only.

The round-trip loader never constructs Python objects from tags (`!!python/object/apply` is a parse error
here, not a call), keeps line/column of every key and value, and is what the fixes write back through.
Aliases make loading cheap and walking expensive (billion laughs), so the walk counts nodes against a budget
and expands each shared mapping or sequence once.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.lines import parser_line_starts
from precisionlint.core.model import Document
from precisionlint.sources import LimitError, Limits, NotCheckable, SourceError, template_action
from precisionlint.sources.tree import Entry, Node, NodeBudget, whole_line_range
from precisionlint.sources.yaml_duplicates import resolve_duplicates

if TYPE_CHECKING:
    from typing import Any

_CONSTRUCTOR: Any = None


def _constructor() -> Any:
    """ruamel's round-trip constructor, with duplicate-key errors that name the key only: ruamel's own message
    prints both values with str(), which for an alias bomb ("billion laughs") expands every alias and takes
    exponential time and memory."""
    global _CONSTRUCTOR
    if _CONSTRUCTOR is None:
        from ruamel.yaml.constructor import DuplicateKeyError, RoundTripConstructor

        class Constructor(RoundTripConstructor):  # type: ignore[misc]
            def construct_document(self, node: Any) -> Any:
                _refuse_nested_collection_keys(node)
                # Duplicate keys and repeated `<<` merges load last-wins, as PyYAML loads them.
                found = resolve_duplicates(node)
                if found:
                    self.__dict__.setdefault("duplicate_keys", []).extend(found)
                return super().construct_document(node)

            def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
                if key in mapping:
                    raise DuplicateKeyError(
                        "while constructing a mapping", node.start_mark,
                        f"found duplicate key {_describe_key(key)}", key_node.start_mark,
                    )
                return True

            def check_set_key(self, node: Any, key_node: Any, setting: Any, key: Any) -> None:
                if key in setting:
                    raise DuplicateKeyError(
                        "while constructing a set", node.start_mark,
                        f"found duplicate key {_describe_key(key)}", key_node.start_mark,
                    )

        _CONSTRUCTOR = Constructor
    return _CONSTRUCTOR


def _refuse_nested_collection_keys(root: Any) -> None:
    """A mapping key that is itself a collection holding another such key (`{{{a: 1}: 2}: 3}`): ruamel's
    round-trip constructor rebuilds and rehashes key mappings at every level, which takes exponential time
    (sixteen levels, 29 bytes: a minute). Configs never need it; the composed node graph says so at once."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    stack: list[tuple[Any, bool]] = [(root, False)]
    seen: set[tuple[int, bool]] = set()
    while stack:
        node, inside_key = stack.pop()
        if (id(node), inside_key) in seen:
            continue  # an alias of a node already looked at
        seen.add((id(node), inside_key))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, (MappingNode, SequenceNode)):
                    if inside_key:
                        mark = key.start_mark
                        raise LimitError(
                            f"a collection used as a mapping key inside another such key (line {mark.line + 1}): "
                            "loading it takes exponential time"
                        )
                    stack.append((key, True))
                stack.append((value, inside_key))
        elif isinstance(node, SequenceNode):
            stack.extend((item, inside_key) for item in node.value)


def _describe_key(key: Any) -> str:
    if isinstance(key, (str, int, float, bool)) or key is None:
        shown = f'"{key}"'
        return shown if len(shown) <= 80 else shown[:76] + '..."'
    return f"(a {type(key).__name__})"


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    yaml.Constructor = _constructor()
    return yaml


def _flow_too_deep(text: str, max_depth: int) -> bool:
    """A line whose flow collections ([...] / {...}) nest deeper than `max_depth`. ruamel's scanner is quadratic
    in the nesting of one line (up to its 1024-character simple-key window) before it ends in RecursionError,
    so such a line would cost seconds to reject; counting brackets outside quotes rejects it at once."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    for line in text.splitlines():
        if line.count("[") + line.count("{") <= max_depth:
            continue
        depth = 0
        for match in _FLOW_TOKENS.finditer(line):
            token = match.group()
            if token in "[{":
                depth += 1
                if depth > max_depth:
                    return True
            elif token in "]}":
                depth = max(depth - 1, 0)
            elif token.lstrip().startswith("#"):
                break
    return False


# A template action outside a comment: Helm's `{{- if .Values.queue }}`, `parallelism: {{ $nodes }}`, Jinja's
# `{% for ... %}`. A chart's `templates/*.yaml` or a Jinja-rendered config becomes YAML only once a tool renders
# it; read as it is, it does not parse, and that is not a mistake in the file. (A template whose actions all sit
# inside quoted strings parses and is checked like any YAML.)
def _has_template_action(text: str) -> bool:
    """A template action (sources.template_action) on a line, before any `#`."""
    return any(template_action(line.split("#", 1)[0]) for line in text.splitlines())


def load(path: str, text: str, limits: Limits) -> Document:
    import warnings

    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if _flow_too_deep(text, limits.max_depth):
        raise LimitError(f"nesting deeper than {limits.max_depth} levels (max-depth)")
    loader = _yaml()
    try:
        with warnings.catch_warnings():
            # ruamel warns (on stderr) about reused anchors and the like: the run's output is the findings.
            warnings.simplefilter("ignore")
            documents = list(loader.load_all(text))
    except MarkedYAMLError as exc:
        if _has_template_action(text):
            raise NotCheckable("a template: Helm or Jinja actions make it YAML only once rendered") from None
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise SourceError(f"invalid YAML: {_one_line(problem)}", line, column) from None
    except RecursionError:
        raise LimitError("nesting too deep to parse") from None
    except LimitError:
        raise
    except YAMLError as exc:
        raise SourceError(f"invalid YAML: {_one_line(str(exc))}") from None
    except AttributeError as exc:
        if "add_referent" in str(exc):  # ruamel cannot build a mapping that merges (<<) its own anchor
            raise NotCheckable("a mapping merges itself (<<: *anchor inside that anchor): not read") from None
        raise SourceError(f"invalid YAML: {_one_line(str(exc)) or type(exc).__name__}") from None
    except Exception as exc:  # ruamel raises assorted errors (e.g. on some tag or encoding oddities)
        raise SourceError(f"invalid YAML: {_one_line(str(exc)) or type(exc).__name__}") from None

    # ruamel (YAML 1.2) counts a lone \r as a line end, as Python does; the walker's offsets and the
    # document's spans must count lines the same way.
    starts = parser_line_starts(text, "yaml")
    budget = NodeBudget(limits.max_nodes, limits.max_depth)
    walker = _Walker(text, starts, budget)
    roots = [walker.convert(doc, 0, (0, 0)) for doc in documents]
    document = Document(path=path, text=text, format="yaml", tree=roots)
    document.line_starts = starts
    document.duplicate_keys = loader.constructor.__dict__.get("duplicate_keys", [])
    return document


# Double-quoted and single-quoted scalars, a comment (after whitespace), or a flow bracket.
_FLOW_TOKENS = re.compile(r""""(?:[^"\\]|\\.)*"|'[^']*'|(?:^|\s)#|[\[\]{}]""")


def _one_line(text: str) -> str:
    return " ".join(text.split())


class _Walker:
    def __init__(self, text: str, starts: list[int], budget: NodeBudget) -> None:
        self.text = text
        self.starts = starts
        self.budget = budget
        self.seen: set[int] = set()
        self.feffs = [m.start() for m in re.finditer("\ufeff", text)] if "\ufeff" in text else []

    def offset(self, line0: int, col0: int) -> int:
        if line0 >= len(self.starts):
            return len(self.text)
        position = self.starts[line0] + col0
        if self.feffs:
            # ruamel's reader does not count U+FEFF (a BOM, or a second one after the BOM) as a column: step
            # over each one before the position, or every edit on that line would land one character early.
            index = bisect_left(self.feffs, self.starts[line0])
            while index < len(self.feffs) and self.feffs[index] <= position:
                position += 1
                index += 1
        return position

    def convert(self, value: Any, depth: int, where: tuple[int, int], flow: bool = False) -> Node:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        self.budget.take(depth)
        if isinstance(value, (CommentedMap, CommentedSeq)):
            if id(value) in self.seen:
                # An alias of a collection already walked: its settings were reported where it is defined.
                return Node("scalar", where[0], where[0], value=None)
            self.seen.add(id(value))
        start = where[0]
        if isinstance(value, CommentedMap):
            node = Node("map", start, start)
            is_flow = bool(value.fa.flow_style())
            for key in value:
                try:
                    k_line, k_col, v_line, v_col = value.lc.data[key]
                except (KeyError, TypeError, AttributeError):
                    continue  # keys that arrive through a merge (<<) have no position of their own here
                k_start = self.offset(k_line, k_col)
                v_start = self.offset(v_line, v_col)
                child = self.convert(value[key], depth + 1, (v_start, v_start), is_flow)
                k_end = self._scalar_end(k_start, is_flow, key=True)
                entry = Entry(str(key), k_start, k_end, child)
                # An alias's value position is where its anchor is (before the key): no clean removal there.
                if not is_flow and child.kind == "scalar" and child.start >= k_end:
                    entry.removal = whole_line_range(self.text, k_start, child.end)
                node.entries.append(entry)
            return node
        if isinstance(value, CommentedSeq):
            node = Node("seq", start, start)
            is_flow = bool(value.fa.flow_style())
            for index, item in enumerate(value):
                try:
                    line, col = value.lc.data[index]
                except (KeyError, IndexError, TypeError, AttributeError):
                    continue
                item_start = self.offset(line, col)
                node.items.append(self.convert(item, depth + 1, (item_start, item_start), is_flow))
            return node
        end = self._scalar_end(start, flow) if start < len(self.text) else start
        plain = _plain(value)
        if isinstance(plain, str) and not isinstance(value, str) and getattr(value, "value", None) is None \
                and not isinstance(value, (int, float)):
            # A set, an ordered map, a timestamp: shown as written in the file, never as a Python repr
            # (set(odict_keys([...]))).
            plain = self.text[start:end].strip() or plain
        return Node("scalar", start, end, value=plain)

    def _scalar_end(self, start: int, flow: bool, key: bool = False) -> int:
        """Where a single-line scalar that starts at `start` ends (exclusive)."""
        text = self.text
        if start >= len(text):
            return start
        char = text[start]
        if char == '"':
            # Up to the closing quote, stepping over each backslash and the character after it (the body's
            # pattern matches at any position, if only the empty string).
            end = _DOUBLE_QUOTED_BODY.match(text, start + 1).end()  # type: ignore[union-attr]
            return end + 1 if end < len(text) and text[end] == '"' else len(text)
        if char == "'":
            # Up to the closing quote; two quotes ('') are a quote inside the scalar.
            end = _SINGLE_QUOTED_BODY.match(text, start + 1).end()  # type: ignore[union-attr]
            return end + 1 if end < len(text) else end
        if char in "|>&*!{[":
            # Block scalars, anchors, aliases, tags, collections: no simple single-line extent.
            line_end = text.find("\n", start)
            return len(text) if line_end == -1 else line_end
        # A plain scalar ends at a line end, at a comment (`#` after a blank, not as its first character), in
        # a flow collection at `,` `]` `}`, and as a key at `: ` (or a colon that ends a line or the text).
        if char in "\r\n" or (flow and char in ",]}") or (key and char == ":" and _VALUE_COLON.match(text, start)):
            return start
        found = _PLAIN_STOPS[flow, key].search(text, start + 1)
        end = len(text) if found is None else found.start()
        while end > start and text[end - 1] in " \t":
            end -= 1
        return end


# The bodies of quoted scalars (what follows the opening quote, up to the closing one), and what ends a plain
# scalar after its first character, by (flow, key).
_DOUBLE_QUOTED_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_SINGLE_QUOTED_BODY = re.compile(r"[^']*(?:''[^']*)*")
_VALUE_COLON = re.compile(r":(?:[ \t\r\n]|\Z)")
_PLAIN_STOPS = {
    (flow, key): re.compile(
        (r"[\r\n,\]}]" if flow else r"[\r\n]") + r"|(?<=[ \t])#" + (r"|:(?=[ \t\r\n]|\Z)" if key else "")
    )
    for flow in (False, True) for key in (False, True)
}


def _plain(value: Any) -> Any:
    """ruamel's scalar subclasses (ScalarFloat, ScalarBoolean, TaggedScalar...) as plain Python values."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return bool(value) if type(value).__name__ == "ScalarBoolean" else int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    tagged = getattr(value, "value", None)
    if isinstance(tagged, str):
        return str(tagged)
    return str(value)
