"""Duplicate keys and repeated `<<` merges, resolved the way PyYAML loads them.

The YAML spec forbids a key twice in one mapping, but the loaders training code uses do not: PyYAML (what
Transformers, Accelerate, DeepSpeed's launchers and most scripts call) and OmegaConf keep the last value, and
PyYAML applies every `<<` merge of a mapping, a later merge overriding an earlier one, the mapping's own keys
overriding both. ruamel.yaml refuses both. So that a config is checked as its consumer reads it, the composed
node graph is rewritten before construction: earlier occurrences of a key are dropped, and several `<<` keys
become one `<<` with a list of maps in precedence order. What was found is returned, so that the
duplicate-key rule can report the repetition (at the occurrence that wins, the others as related locations).
Repeated merges are reported only where they disagree: two of them supply one key with different values and
the mapping does not set that key itself. Merges that agree (NVIDIA's Transformer-XL configs merge `*wt103` and
`*train`, where `train` already merges `*wt103`) load to the same mapping in any order, so the config says one
thing; that strict loaders refuse the file is a matter of style, not of the precision the job runs with.

It works on the composed nodes of ruamel.yaml and of PyYAML alike (both have MappingNode/SequenceNode with a
`.value` list and `.start_mark`), so every YAML loader of precisionlint can share it.
"""

from __future__ import annotations

import sys

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

MERGE_TAG = "tag:yaml.org,2002:merge"


Position = tuple[int, int]  # 1-based line and column of a key


def resolve_duplicates(root: Any) -> list[tuple[str, tuple[Position, ...]]]:
    """Rewrite the node graph under `root` in place, last-wins; (key, 1-based position of each occurrence) for each
    key that occurred more than once in one mapping (`<<` for repeated merges). Each node is visited once, so
    aliases cost nothing extra."""
    found: list[tuple[str, tuple[Position, ...]]] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        kind = type(node).__name__
        if kind == "MappingNode":
            _merge_merges(node, found)
            _drop_earlier(node, found)
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif kind == "SequenceNode":
            stack.extend(node.value)
    found.sort(key=lambda item: item[1])
    return found


def _position(node: Any) -> Position:
    mark = getattr(node, "start_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _merge_merges(node: Any, found: list[tuple[str, tuple[Position, ...]]]) -> None:
    merges = [(index, key, value) for index, (key, value) in enumerate(node.value) if key.tag == MERGE_TAG]
    if len(merges) < 2:
        return
    # PyYAML: a later `<<` overrides an earlier one; inside one `<<: [a, b]` list, `a` overrides `b`. One list
    # whose earlier maps take precedence expresses both: the later merge's maps first.
    combined: list[Any] = []
    for _, _, value in reversed(merges):
        if type(value).__name__ == "SequenceNode":
            combined.extend(value.value)
        else:
            combined.append(value)
    first_index, first_key, first_value = merges[0]
    library = sys.modules[type(node).__module__]
    sequence = library.SequenceNode("tag:yaml.org,2002:seq", combined, first_value.start_mark,
                                    merges[-1][2].end_mark)
    disagree = _merges_disagree(node, [value for _, _, value in merges])
    drop = {index for index, _, _ in merges[1:]}
    node.value[first_index] = (first_key, sequence)
    node.value[:] = [pair for index, pair in enumerate(node.value) if index not in drop]
    if disagree:
        found.append(("<<", tuple(_position(key) for _, key, _ in merges)))


_DEPTH = 50  # nesting followed when merged maps are compared; deeper values count as different


def _merges_disagree(node: Any, merged: list[Any]) -> bool:
    """Whether two of the `<<` values `merged` (each a map, or a list of maps) supply one key with different
    values that the mapping `node` does not set itself: then which merge wins decides what is loaded."""
    own = {_ident(key) for key, _ in node.value if _is_plain_key(key)}
    supplied: dict[tuple[str, str], list[tuple[int, Any]]] = {}
    for number, value in enumerate(merged):
        maps = value.value if type(value).__name__ == "SequenceNode" else [value]
        for one in maps:
            for ident, item in _keys_of(one, set(), 0).items():
                if ident not in own:
                    supplied.setdefault(ident, []).append((number, item))
    for items in supplied.values():
        first_number, first = items[0]
        if any(number != first_number and not _same(first, item, 0) for number, item in items[1:]):
            return True
    return False


def _keys_of(mapping: Any, visiting: set[int], depth: int) -> dict[tuple[str, str], Any]:
    """The keys a merged map supplies, with their value nodes: its own, then those of its own merges that it
    does not set (earlier merges first, as PyYAML applies them)."""
    if type(mapping).__name__ != "MappingNode" or id(mapping) in visiting or depth > _DEPTH:
        return {}
    visiting = visiting | {id(mapping)}
    keys = {_ident(key): value for key, value in mapping.value if _is_plain_key(key)}
    for key, value in mapping.value:
        if key.tag != MERGE_TAG:
            continue
        maps = value.value if type(value).__name__ == "SequenceNode" else [value]
        for one in maps:
            for ident, item in _keys_of(one, visiting, depth + 1).items():
                keys.setdefault(ident, item)
    return keys


def _is_plain_key(key: Any) -> bool:
    return type(key).__name__ == "ScalarNode" and key.tag != MERGE_TAG


def _ident(key: Any) -> tuple[str, str]:
    return (key.tag, key.value)


def _same(a: Any, b: Any, depth: int) -> bool:
    """Two value nodes load to the same value: the same node (an alias), or equal scalars, sequences and maps."""
    if a is b:
        return True
    kind = type(a).__name__
    if kind != type(b).__name__ or a.tag != b.tag or depth > _DEPTH:
        return False
    if kind == "ScalarNode":
        return bool(a.value == b.value)
    if len(a.value) != len(b.value):
        return False
    if kind == "SequenceNode":
        return all(_same(x, y, depth + 1) for x, y in zip(a.value, b.value, strict=True))
    return all(_same(ka, kb, depth + 1) and _same(va, vb, depth + 1)
               for (ka, va), (kb, vb) in zip(a.value, b.value, strict=True))


def _drop_earlier(node: Any, found: list[tuple[str, tuple[Position, ...]]]) -> None:
    occurrences: dict[tuple[str, str], list[int]] = {}
    for index, (key, _) in enumerate(node.value):
        if type(key).__name__ == "ScalarNode" and key.tag != MERGE_TAG:
            occurrences.setdefault((key.tag, key.value), []).append(index)
    repeated = {ident: indexes for ident, indexes in occurrences.items() if len(indexes) > 1}
    if not repeated:
        return
    drop: set[int] = set()
    for (_, text), indexes in repeated.items():
        drop.update(indexes[:-1])
        found.append((str(text), tuple(_position(node.value[i][0]) for i in indexes)))
    node.value[:] = [pair for index, pair in enumerate(node.value) if index not in drop]
