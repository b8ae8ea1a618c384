"""Duplicate keys and repeated `<<` merges, resolved the way PyYAML loads them.

The YAML spec forbids a key twice in one mapping, but the loaders training code uses do not: PyYAML (what
Transformers, Accelerate, DeepSpeed's launchers and most scripts call) and OmegaConf keep the last value, and
PyYAML applies every `<<` merge of a mapping, a later merge overriding an earlier one, the mapping's own keys
overriding both. ruamel.yaml refuses both. So that a config is checked as its consumer reads it, the composed
node graph is rewritten before construction: earlier occurrences of a key are dropped, and several `<<` keys
become one `<<` with a list of maps in precedence order. What was found is returned, so that the
duplicate-key rule can report the repetition (at the occurrence that wins, the others as related locations).

It works on the composed nodes of ruamel.yaml and of PyYAML alike (both have MappingNode/SequenceNode with a
`.value` list and `.start_mark`), so every YAML loader of precisionlint can share it.
"""

from __future__ import annotations

import sys
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
    drop = {index for index, _, _ in merges[1:]}
    node.value[first_index] = (first_key, sequence)
    node.value[:] = [pair for index, pair in enumerate(node.value) if index not in drop]
    found.append(("<<", tuple(_position(key) for _, key, _ in merges)))


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
