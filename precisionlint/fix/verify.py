"""Verifying a fix through the round-trip trees: the fixed text must read back, with the same library as
the original (tomlkit, ruamel.yaml round-trip, json), as the same tree everywhere except the edited keys,
which must hold exactly what the fix meant to write (or be gone, for a removal). A Python fix must leave code
that still parses.

Linear in the file: the original is parsed and its editable spans indexed once per pass; a batch of fixes
costs one parse of the new text and one walk of both trees (collections shared through YAML aliases are
compared once), bounded by the same node and depth limits as the loaders.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from precisionlint.core.model import Document, Edit, Fix
from precisionlint.fix.edits import apply_edits
from precisionlint.sources import LimitError, Limits
from precisionlint.sources.tree import Entry, Node, NodeBudget

CONFIG_FORMATS = ("toml", "yaml", "json")


@dataclass(frozen=True)
class Expectation:
    """What a fix does to the parsed tree: the value at `path` (document index first) is `value`, or the
    key is gone (present=False). Every other part of the tree must be unchanged."""

    path: tuple[Any, ...]
    present: bool
    value: Any = None


class _Unverifiable(Exception):  # noqa: N818 - a reason, not a failure
    """The change cannot be proven clean (a text that does not parse, an edit that names no key)."""


class Verifier:
    """Accepts or refuses fixes for one document. Parses the original text once, and indexes once which key
    each editable span belongs to, so that verifying a batch of fixes costs one parse of the new text and one
    walk of the two trees, whatever the number of fixes."""

    def __init__(self, document: Document, limits: Limits) -> None:
        self.document = document
        self.limits = limits
        self._old: list[Any] | None = None
        self._index: dict[tuple[int, int], tuple[tuple[Any, ...], str]] | None = None

    def accepts(self, fixes: Sequence[Fix]) -> bool:
        return self.refusal(fixes) is None

    def refusal(self, fixes: Sequence[Fix]) -> str | None:
        """None when the fixes together verify; else why not, in words for the user."""
        document = self.document
        new_text = apply_edits(document.text, [e for fix in fixes for e in fix.edits])
        if document.format == "python":
            return None if _python_parses(new_text) else "the fixed code would not parse"
        if document.format == "notebook":
            from precisionlint.sources.notebook_edits import verify

            return verify(document.text, new_text)
        if document.format not in CONFIG_FORMATS:
            return "not a config format"
        try:
            # An edit inside a comment (removing an unused suppression) expects no change at all.
            expectations = [self._expectation(edit) for fix in fixes for edit in fix.edits
                            if not _in_comment(document, edit)]
            if self._old is None:
                self._old = parse_config(document.format, document.text)
            new = parse_config(document.format, new_text)
        except _Unverifiable as exc:
            return str(exc)
        if not same_except(self._old, new, expectations, self.limits):
            return "the fixed file would not read back with only this value changed"
        return None

    def _expectation(self, edit: Edit) -> Expectation:
        if self._index is None:
            self._index = _span_index(self.document, self.limits)
        found = self._index.get((edit.start, edit.end))
        if found is None:
            raise _Unverifiable("the edit does not cover exactly one value or entry")
        path, kind = found
        if kind == "removal":
            if edit.replacement != "":
                raise _Unverifiable("the edit does not cover exactly one value or entry")
            return Expectation(path, False)
        return Expectation(path, True, parse_literal(self.document.format, edit.replacement))


def _in_comment(document: Document, edit: Edit) -> bool:
    """The edit changes only a comment of a TOML or YAML line: from the comment's start (or the blanks before
    it) to at most the end of its line. Such an edit must leave the parsed tree identical, which the verifier
    then demands."""
    from precisionlint.engine.suppress import hash_comments

    text = document.text
    # A lone CR ends a line too (YAML 1.2 and old Mac files): otherwise a comment on an earlier "line" would
    # seem to cover the edit.
    line_start = max(text.rfind("\n", 0, edit.start), text.rfind("\r", 0, edit.start)) + 1
    ends = [end for end in (text.find("\n", edit.start), text.find("\r", edit.start)) if end != -1]
    line_end = min(ends) if ends else len(text)
    # The edit may take the line's ending with it (a whole directive line removed): one character, or two
    # for a CRLF.
    ending = 2 if text.startswith("\r\n", line_end) else 1
    if edit.end > line_end + ending or "\n" in edit.replacement or "\r" in edit.replacement or "#" in edit.replacement:
        return False
    line = text[line_start:line_end]
    for _number, column, _comment in hash_comments(line):
        comment_start = line_start + column - 1
        return edit.start >= comment_start or text[edit.start:comment_start].strip() == ""
    return False


def _span_index(document: Document, limits: Limits) -> dict[tuple[int, int], tuple[tuple[Any, ...], str]]:
    """(start, end) of every scalar value and every removable entry -> its key path and what an edit of
    exactly that span means ("value": a new value; "removal": the entry is gone). The walk is bounded by the
    node budget, as the loaders' own walk is."""
    index: dict[tuple[int, int], tuple[tuple[Any, ...], str]] = {}
    roots = document.tree if document.format == "yaml" else [document.tree]
    stack: list[tuple[Node, tuple[Any, ...]]] = [(root, (i,)) for i, root in enumerate(roots) if root]
    budget = NodeBudget(limits.max_nodes, limits.max_depth)
    seen: set[int] = set()
    try:
        while stack:
            node, path = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            budget.take(0)
            if node.kind == "map":
                for entry in node.entries:
                    key_path = path + (entry.key,)
                    if entry.removal is not None:
                        index.setdefault(entry.removal, (key_path, "removal"))
                    value = entry.value
                    if value.kind == "scalar" and value.start >= entry.key_end and value.end > value.start:
                        index.setdefault((value.start, value.end), (key_path, "value"))
                    stack.append((value, key_path))
            elif node.kind == "seq":
                for position, item in enumerate(node.items):
                    if item.kind == "scalar" and item.end > item.start:
                        index.setdefault((item.start, item.end), (path + (position,), "value"))
                    stack.append((item, path + (position,)))
    except LimitError:
        pass  # what was indexed can be verified; an edit elsewhere is refused
    return index


def verify_change(document: Document, new_text: str, expectations: Sequence[Expectation],
                  limits: Limits | None = None) -> bool:
    """True when `new_text` parses with the document's own library and differs from the document only as
    `expectations` say."""
    if document.format == "python":
        return _python_parses(new_text)
    try:
        old = parse_config(document.format, document.text)
        return same_except(old, parse_config(document.format, new_text), expectations, limits or Limits())
    except _Unverifiable:
        return False


def _python_parses(text: str) -> bool:
    import ast

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class _JsonObject(list):  # type: ignore[type-arg]
    """A JSON object as its (key, value) pairs: keeps member order and duplicate keys visible."""


def parse_config(fmt: str, text: str) -> list[Any]:
    """The documents of a config text as its round-trip library reads them (one per YAML document)."""
    try:
        if fmt == "toml":
            import tomlkit

            return [tomlkit.parse(text).unwrap()]
        if fmt == "yaml":
            from precisionlint.sources.yaml_source import _yaml

            return list(_yaml().load_all(text))
        if fmt == "json":
            from precisionlint.sources.json_source import _reject_constant, without_comments

            plain = without_comments(text) or text  # JSON with comments reads back as its loader reads it
            return [json.loads(plain, object_pairs_hook=_JsonObject, parse_constant=_reject_constant)]
    except RecursionError:
        raise _Unverifiable("the fixed file would be nested too deeply to verify") from None
    except Exception:  # each library has its own error types; any of them means "does not parse"
        raise _Unverifiable("the fixed file would not parse") from None
    raise _Unverifiable(f"not a config format: {fmt}")


def parse_literal(fmt: str, literal: str) -> Any:
    """The value a literal stands for in `fmt`, read by the same library (so YAML 1.2 rules, TOML types)."""
    if fmt == "toml":
        documents = parse_config(fmt, f"v = {literal}\n")
    elif fmt == "yaml":
        documents = parse_config(fmt, f"v: {literal}\n")
    else:
        return parse_config(fmt, literal)[0]
    root = documents[0] if documents else None
    if not isinstance(root, dict) or list(root) != ["v"]:
        raise _Unverifiable(f"not a single {fmt} value: {literal!r}")
    return root["v"]


def edit_expectation(document: Document, edit: Edit) -> Expectation:
    """What an edit of a config fix means in the tree: the removal of one entry, or a new value for one
    scalar. An edit that is neither (it spans several keys, or half a value) cannot be verified."""
    roots = document.tree if document.format == "yaml" else [document.tree]
    stack: list[tuple[Node, tuple[Any, ...]]] = [(root, (index,)) for index, root in enumerate(roots) if root]
    while stack:
        node, path = stack.pop()
        if node.kind == "map":
            for entry in node.entries:
                found = _entry_expectation(document, entry, path + (entry.key,), edit)
                if found is not None:
                    return found
                stack.append((entry.value, path + (entry.key,)))
        elif node.kind == "seq":
            for index, item in enumerate(node.items):
                if item.kind == "scalar" and item.end > item.start and (item.start, item.end) == (edit.start, edit.end):
                    return Expectation(path + (index,), True, parse_literal(document.format, edit.replacement))
                stack.append((item, path + (index,)))
    raise _Unverifiable("the edit names no single key")


def _entry_expectation(document: Document, entry: Entry, path: tuple[Any, ...], edit: Edit) -> Expectation | None:
    if entry.removal is not None and entry.removal == (edit.start, edit.end) and edit.replacement == "":
        return Expectation(path, False)
    value = entry.value
    if value.kind != "scalar" or value.start < entry.key_end or value.end <= value.start:
        return None
    if (value.start, value.end) == (edit.start, edit.end):
        return Expectation(path, True, parse_literal(document.format, edit.replacement))
    return None


def same_except(old: list[Any], new: list[Any], expectations: Sequence[Expectation], limits: Limits) -> bool:
    """`new` equals `old` except at the expectations' paths, where it holds what they say. Key order, types
    and the number of documents all count; a tree too large to compare (an alias bomb) is not accepted."""
    budget = _CompareBudget(limits.max_nodes, limits.max_depth)
    trie: dict[Any, Any] = {}
    for expectation in expectations:
        node = trie
        for key in expectation.path[:-1]:
            child = node.setdefault(key, {})
            if isinstance(child, Expectation):
                return False  # one fix sets a key, another edits inside it: not a clean change
            node = child
        node[expectation.path[-1]] = expectation
    if not old and len(new) == 1:
        old = [{}]  # an empty YAML stream has no document: adding the first mapping is adding to an empty one
    try:
        return _same_sequence(old, new, trie, budget, 0)
    except LimitError:
        return False


class _CompareBudget(NodeBudget):
    """The node budget of one comparison, and the pairs of collections already compared."""

    def __init__(self, max_nodes: int, max_depth: int) -> None:
        super().__init__(max_nodes, max_depth)
        self.compared: set[tuple[int, int]] = set()


def _same(old: Any, new: Any, trie: dict[Any, Any], budget: _CompareBudget, depth: int) -> bool:
    if not trie and isinstance(old, (dict, list)) and isinstance(new, (dict, list)):
        # A YAML alias is the same object wherever it is used: compare each pair of collections once, so an
        # alias bomb costs its size on disk, not its expanded size.
        pair = (id(old), id(new))
        if pair in budget.compared:
            return True
        budget.compared.add(pair)
    budget.take(depth)
    old_pairs, new_pairs = _pairs(old), _pairs(new)
    if old_pairs is not None or new_pairs is not None:
        if old_pairs is None or new_pairs is None:
            return False
        return _same_map(old_pairs, new_pairs, trie, budget, depth)
    old_items, new_items = _items(old), _items(new)
    if old_items is not None or new_items is not None:
        if old_items is None or new_items is None:
            return False
        return _same_sequence(old_items, new_items, trie, budget, depth)
    return not trie and scalar_key(old) == scalar_key(new)


def _same_map(old: list[tuple[Any, Any]], new: list[tuple[Any, Any]], trie: dict[Any, Any], budget: _CompareBudget,
              depth: int) -> bool:
    leaves = {key: x for key, x in trie.items() if isinstance(x, Expectation)}
    if leaves:
        old_hits: dict[str, list[Any]] = {}
        new_hits: dict[str, list[Any]] = {}
        for pairs, hits in ((old, old_hits), (new, new_hits)):
            for k, v in pairs:
                name = _key_text(k)
                if name in leaves:
                    hits.setdefault(name, []).append(v)
        for key, expectation in leaves.items():
            before, after = old_hits.get(key, []), new_hits.get(key, [])
            if len(before) > 1 or len(after) != (1 if expectation.present else 0):
                return False
            if expectation.present and not _same(expectation.value, after[0], {}, budget, depth + 1):
                return False
    old_rest = [(k, v) for k, v in old if _key_text(k) not in leaves]
    new_rest = [(k, v) for k, v in new if _key_text(k) not in leaves]
    if [scalar_key(k) for k, _ in old_rest] != [scalar_key(k) for k, _ in new_rest]:
        return False
    deeper = {key for key in trie if key not in leaves}
    if not deeper <= {_key_text(k) for k, _ in old_rest}:
        return False  # an edit inside a key that does not exist
    return all(_same(ov, nv, trie.get(_key_text(k), {}), budget, depth + 1)
               for (k, ov), (_, nv) in zip(old_rest, new_rest, strict=True))


def _key_text(key: Any) -> str:
    """A mapping key as the loaders name it; a key str() cannot spell (an integer of more than 4,300
    digits) names no setting, so no fix can target it."""
    try:
        return str(key)
    except ValueError:
        return f"<{type(key).__name__} key {id(key)}>"


def _same_sequence(old: Sequence[Any], new: Sequence[Any], trie: dict[Any, Any], budget: _CompareBudget,
                   depth: int) -> bool:
    if len(old) != len(new) or any(not isinstance(k, int) or not 0 <= k < len(old) for k in trie):
        return False
    for index, (old_item, new_item) in enumerate(zip(old, new, strict=True)):
        sub = trie.get(index, {})
        if isinstance(sub, Expectation):
            if not sub.present or not _same(sub.value, new_item, {}, budget, depth + 1):
                return False
        elif not _same(old_item, new_item, sub, budget, depth + 1):
            return False
    return True


def _pairs(value: Any) -> list[tuple[Any, Any]] | None:
    if isinstance(value, _JsonObject):
        return list(value)
    if isinstance(value, dict):
        return list(value.items())
    return None


def _items(value: Any) -> list[Any] | None:
    if isinstance(value, (list, tuple)) and not isinstance(value, _JsonObject):
        return list(value)
    return None


def scalar_key(value: Any) -> tuple[str, Any]:
    """A scalar as (kind, value), so that 1, 1.0, True and "1" all differ, NaN equals NaN, and ruamel's
    scalar subclasses (ScalarFloat, ScalarBoolean, quoted strings) compare as their plain values: a change of
    quoting is not a change of value."""
    from precisionlint.sources.yaml_source import _plain

    plain = _plain(value) if not isinstance(value, (dict, list)) else value
    if plain is None:
        return ("null", None)
    if isinstance(plain, bool):
        return ("bool", plain)
    if isinstance(plain, int):
        return ("int", int(plain))
    if isinstance(plain, float):
        return ("float", repr(float(plain)))
    if isinstance(plain, str):
        tag = getattr(getattr(value, "tag", None), "value", None)
        return ("str", str(plain)) if not tag else ("tagged", f"{tag} {plain}")
    return (type(value).__name__, str(value))

