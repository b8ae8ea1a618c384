"""The JSON position scan: one match per member, and big containers (a vocabulary, a merges list) left unbuilt
until read. The tree, once read, is the one a member-by-member build makes; the limits count what was not built;
a repeated key inside a big container is still reported where it stands."""

from __future__ import annotations

from typing import Any

import pytest

from precisionlint.sources import LimitError, Limits, SourceError, json_source
from precisionlint.sources.tree import Node


def _dump(node: Node) -> list[Any]:
    out: list[Any] = [(node.kind, node.start, node.end, repr(node.value), type(node.value).__name__)]
    for entry in node.entries:
        out.append(("entry", entry.key, entry.key_start, entry.key_end, entry.removal))
        out += _dump(entry.value)
    for item in node.items:
        out += _dump(item)
    return out


def _config(members: int) -> str:
    vocab = ",\n".join(f'      "tok\\u00e9{i}": {i}' for i in range(members))
    merges = ", ".join(f'"a{i} b{i}"' for i in range(members))
    nested = ", ".join('{"x": [1, 2]}' for _ in range(members))
    return (
        '{\n  "fp16": {"enabled": true, "loss_scale": 0},\n  "tokenizer": {\n    "vocab": {\n' + vocab
        + '\n    },\n    "merges": [' + merges + '],\n    "nested": [' + nested
        + "]\n  },\n  \"bf16\": {\"enabled\": false}\n}\n"
    )


def test_a_big_container_is_left_unbuilt_and_reads_as_if_built(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _config(3000)
    lazy = json_source.load("ds.json", text, Limits())
    vocab = lazy.tree.get("tokenizer").value.get("vocab").value
    merges = lazy.tree.get("tokenizer").value.get("merges").value
    assert vocab._shared is not None and merges._shared is not None  # not built yet
    # What a walk over a config's sections asks, answered without building: keys, a missing key, no maps in it.
    assert len(vocab.keys()) == 3000 and "tok\u00e9" + "17" in vocab.keys()
    assert vocab.get("precision") is None and vocab.child_maps() == [] and merges.get("x") is None
    assert vocab._shared is not None and vocab.end == text.index("}", text.index('"tok\\u00e92999"')) + 1
    monkeypatch.setattr(json_source, "_LAZY_AFTER", 1 << 40)  # the same file, every member built by the scan
    eager = json_source.load("ds.json", text, Limits())
    assert _dump(lazy.tree) == _dump(eager.tree)  # reading builds it: the same members, positions, removals
    assert vocab._shared is None and vocab.get("tok\u00e917").value.value == 17


def test_a_big_container_is_validated_once_and_errors_inside_it_are_reported_as_before() -> None:
    """The scan runs before json.loads validates the rest (the big containers, measured by the C decoder, are not
    decoded twice); a file that is not plain JSON still gets json.loads's message and position, or is read as
    JSON with comments, as before."""
    text = _config(3000)
    document = json_source.load("ds.json", text, Limits())
    vocab = document.tree.get("tokenizer").value.get("vocab").value
    assert vocab._shared is not None and not vocab._shared.unbuilt  # left unbuilt; nothing left to validate
    broken = text.replace('"tok\\u00e92500": 2500,', '"tok\\u00e92500": 2500', 1)  # a comma missing deep inside
    with pytest.raises(SourceError) as raised:
        json_source.load("ds.json", broken, Limits())
    assert (raised.value.message, raised.value.line, raised.value.column) == (
        "invalid JSON: Expecting ',' delimiter", 2506, 7)
    commented = text.replace('"tok\\u00e92500": 2500,', '"tok\\u00e92500": 2500, // the 2,500th', 1)
    tree = json_source.load("ds.json", commented, Limits()).tree
    assert tree.get("tokenizer").value.get("vocab").value.get("tok\u00e92500").value.value == 2500


def test_the_limits_count_what_was_not_built() -> None:
    text = _config(3000)  # 3 + 3,000 + 3,000 + 3 * 3,000 + ... values
    with pytest.raises(LimitError, match="max-nodes"):
        json_source.load("ds.json", text, Limits(max_nodes=10_000))
    json_source.load("ds.json", text, Limits(max_nodes=20_000))
    deep = '{"a": [' + ", ".join("[[[[1]]]]" for _ in range(3000)) + "]}"
    with pytest.raises(LimitError, match="max-depth"):
        json_source.load("deep.json", deep, Limits(max_depth=4))


def test_a_repeated_key_in_a_big_object_is_reported_where_it_stands() -> None:
    members = [f'"k{i}": {i}' for i in range(3000)]
    members.insert(2500, '"k7": "again"')
    text = '{"model": {\n' + ",\n".join(members) + "\n}}\n"
    document = json_source.load("big.json", text, Limits())
    assert document.duplicate_keys == [("k7", ((9, 1), (2502, 1)))]
    model = document.tree.get("model").value
    assert model.get("k7").value.value == "again" and len(model.entries) == 3000
