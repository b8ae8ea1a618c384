"""`advise --write FILE`: change or insert settings in the user's own config file, with the fixes' guarantees.

An existing value is replaced in place; an absent setting is inserted into its section in the file's own
style (indentation, `=` spacing, quoting, line endings), and the section is created when the file has none.
Every change is verified through the round-trip trees (precisionlint.fix.verify) before it is offered, and
written with precisionlint.fix.write.rewrite, the writer of `check --fix`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from precisionlint.core.model import Document, Edit, Format
from precisionlint.fix.edits import apply_edits, well_formed
from precisionlint.fix.verify import (
    CONFIG_FORMATS,
    Expectation,
    _Unverifiable,
    edit_expectation,
    scalar_key,
    verify_change,
)
from precisionlint.sources import LimitError, SourceError
from precisionlint.sources.tree import Entry, Node


def plan_setting_changes(path: str, changes: dict[str, object], data: bytes | None = None) -> tuple[str, str]:
    """(old_text, new_text) of the config at `path` with `changes` made: canonical setting name -> new value,
    None to remove the entry. An existing value is replaced in place (every occurrence of that setting); an
    absent setting is inserted into its section ([trainer_config], a `trainer:` mapping...) in the file's
    own style, and that section is created when the file has none. Texts are without BOM; write the new one
    with fix_write.rewrite, which keeps the BOM. `data`: the file's bytes, when the caller read them (to
    write only over exactly those). Raises ValueError when a change cannot be made cleanly."""
    from precisionlint.sources import format_of
    from precisionlint.sources.decoding import decode_source

    fmt = format_of(path)
    if fmt not in CONFIG_FORMATS:
        raise ValueError(f"{path}: not a TOML, YAML or JSON config")
    if data is None:
        from precisionlint.core.bounded_read import read_bytes
        from precisionlint.sources import Limits

        try:
            data = read_bytes(path, Limits().max_file_size)
        except OSError as exc:
            raise ValueError(f"{path}: {exc.strerror or exc}") from None
    try:
        text = decode_source(data, path)
    except SourceError as exc:
        raise ValueError(f"{path}: {exc}") from None
    # Two steps, each verified on its own: values changed or removed in place, then the absent settings
    # inserted into the text that results (an insertion may land where a removal was).
    document = _load(path, text, fmt)
    absent = [(name, value) for name, value in changes.items() if not document.settings_named(name)]
    edits: list[Edit] = []
    for name, value in changes.items():
        edits.extend(_in_place_edits(document, document.settings_named(name), name, value))
    changed = _apply_verified(document, edits, [_expectation_or_error(document, edit) for edit in edits])
    document = _load(path, changed, fmt)
    inserted, promised = _insertions(document, [(n, v) for n, v in absent if v is not None])
    return text, _apply_verified(document, inserted, promised)


def _load(path: str, text: str, fmt: Format) -> Document:
    from precisionlint.frameworks.documents import load_document

    try:
        return load_document(path, text, fmt)
    except (SourceError, LimitError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def _apply_verified(document: Document, edits: Sequence[Edit], expectations: Sequence[Expectation]) -> str:
    if not edits:
        return document.text
    if not well_formed(edits, len(document.text)):
        raise ValueError(f"{document.path}: the changes overlap")
    new_text = apply_edits(document.text, edits)
    if not verify_change(document, new_text, expectations):
        raise ValueError(f"{document.path}: the change would not read back as intended; not written")
    return new_text


def _in_place_edits(document: Document, settings: Sequence[Any], name: str, value: object) -> list[Edit]:
    from precisionlint.sources.setting_edits import remove_entry, replace_value

    edits: list[Edit] = []
    for setting in settings:
        if value is not None and scalar_key(setting.value) == scalar_key(value):
            continue  # already so
        if value is None:
            fix = remove_entry(setting, f"Remove {name}", safe=True)
        else:
            fix = replace_value(document, setting, value, f"Set {name}", safe=True)
        if fix is None:
            raise ValueError(f"{document.path}: cannot change {setting.key_text} in place")
        edits.extend(fix.edits)
    return edits


def _expectation_or_error(document: Document, edit: Edit) -> Expectation:
    try:
        return edit_expectation(document, edit)
    except _Unverifiable as exc:
        raise ValueError(f"{document.path}: {exc}") from None


@dataclass
class _Section:
    """Where absent settings go: a mapping node of the tree (None: to be created at the root)."""

    node: Node | None
    path: tuple[str, ...]  # key path from the root
    entry: Entry | None  # the entry whose value the section is (None for the root itself)
    keys: list[tuple[str, object]] = field(default_factory=list)  # (key as written, value) to insert


def _insertions(document: Document, absent: Sequence[tuple[str, object]]) -> tuple[list[Edit], list[Expectation]]:
    """One insertion edit per target section (holding all its new keys), and what each promises."""
    if not absent:
        return [], []
    roots = document.tree if document.format == "yaml" else [document.tree]
    if len(roots) > 1:
        raise ValueError(f"{document.path}: several YAML documents; cannot tell which one to change")
    root = roots[0] if roots else None
    sections: dict[tuple[str, ...], _Section] = {}
    for name, value in absent:
        section = _target_section(document, root, name)
        sections.setdefault(section.path, section).keys.append((section_key(name), value))
    edits: list[Edit] = []
    expectations: list[Expectation] = []
    for section in sections.values():
        if section.node is None:
            edits.append(_create_section(document, root, section))
            expectations.append(Expectation((0, *section.path), True, dict(section.keys)))
            continue
        edits.append(_insert_into(document, section))
        expectations.extend(Expectation((0, *section.path, key), True, value) for key, value in section.keys)
    return edits, expectations


# TrainingArguments flags live at the top level of a Transformers YAML/JSON file, under their own names.
HF_INSERTABLE = ("fp16", "bf16", "tf32")


def section_key(name: str) -> str:
    """The key a canonical setting is written under in its section."""
    from precisionlint.frameworks import LIGHTNING_TRAINER_ROWS, TRAINER_CONFIG_ROWS

    if name in HF_INSERTABLE:
        return name
    for row in (*TRAINER_CONFIG_ROWS, *LIGHTNING_TRAINER_ROWS):
        if row.name == name and len(row.path) == 1:
            return row.path[0]
    raise ValueError(f"cannot insert setting {name!r}: only trainer settings "
                     f"({', '.join(r.name for r in TRAINER_CONFIG_ROWS)}) can be added to a file")


def _target_section(document: Document, root: Node | None, name: str) -> _Section:
    """The mapping an absent setting belongs in: the file's [trainer_config], else (for `precision`) a
    Lightning `trainer:` mapping, else a new [trainer_config] when the file holds no other framework's
    settings (adding trainer_config to a DeepSpeed or Accelerate file would make it invalid)."""
    from precisionlint.frameworks import _sections  # the one place that knows which mapping is what

    key = section_key(name)
    if root is not None and root.kind != "map":
        raise ValueError(f"{document.path}: the document is not a mapping")
    if name in HF_INSERTABLE:
        if root is not None and document.format in ("yaml", "json") and any(
            s.scope == "hf" for s in document.settings
        ):
            return _Section(root, (), None)
        raise ValueError(f"{document.path}: cannot add {key}: not a Transformers TrainingArguments file")
    existing = root.get("trainer_config") if root is not None else None
    if existing is not None:
        if existing.value.kind != "map":
            raise ValueError(f"{document.path}: trainer_config is not a table/mapping")
        return _Section(existing.value, ("trainer_config",), existing)
    trainer = _find_trainer(root) if root is not None else None
    if trainer is not None:
        if name == "precision":
            return trainer
        raise ValueError(f"{document.path}: a Lightning trainer section has no {key} argument; call "
                         f"torch.set_float32_matmul_precision in the training script instead")
    if root is not None and list(_sections(root)):
        raise ValueError(f"{document.path}: this file has no section that takes {key}")
    return _Section(None, ("trainer_config",), None)


def _find_trainer(root: Node) -> _Section | None:
    queue: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
    while queue:
        node, path = queue.pop(0)
        for entry in node.entries:
            if entry.value.kind != "map" or len(path) > 6:
                continue
            if entry.key in ("trainer", "pl_trainer", "lightning_trainer"):
                return _Section(entry.value, (*path, entry.key), entry)
            queue.append((entry.value, (*path, entry.key)))
    return None


def _newline(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_end(text: str, offset: int) -> int:
    """Offset just after the newline of the line holding `offset` (or the end of the text)."""
    end = text.find("\n", offset)
    return len(text) if end == -1 else end + 1


def _insert_into(document: Document, section: _Section) -> Edit:
    if document.format == "toml":
        return _toml_insert(document, section)
    if document.format == "yaml":
        return _yaml_insert(document, section)
    return _json_insert(document, section)


def _create_section(document: Document, root: Node | None, section: _Section) -> Edit:
    text = document.text
    nl = _newline(text)
    fmt = document.format
    if fmt == "json":
        return _json_create(document, root, section)
    if fmt == "toml":
        lines = ["[trainer_config]"] + [f"{_toml_key(k)} = {_literal('toml', v)}" for k, v in section.keys]
    else:
        unit = " " * _yaml_indent_unit(text)
        lines = ["trainer_config:"] + [f"{unit}{_yaml_key(k)}: {_literal('yaml', v)}" for k, v in section.keys]
    block = nl.join(lines) + nl
    if not text:
        return Edit(0, 0, block)
    lead = "" if text.endswith("\n") else nl
    if fmt == "toml" and text.strip():
        lead += "" if text.endswith(nl + nl) else nl  # a blank line before a new table, as TOML files do
    return Edit(len(text), len(text), lead + block)


def _literal(fmt: str, value: object) -> str:
    from precisionlint.sources.setting_edits import Unspellable, render_literal

    try:
        return render_literal(fmt, value)
    except Unspellable as exc:
        raise ValueError(str(exc)) from None


def _toml_key(key: str) -> str:
    import tomlkit

    return tomlkit.key(key).as_string()


def _yaml_key(key: str) -> str:
    from precisionlint.sources.setting_edits import plain_yaml_safe

    return key if plain_yaml_safe(key) else json.dumps(key, ensure_ascii=False)


def _toml_insert(document: Document, section: _Section) -> Edit:
    """Into a [table] after its last own key line, with that line's indentation and `=` spacing; into an
    inline table before its closing brace; as dotted keys beside existing dotted keys."""
    text = document.text
    assert section.node is not None and section.entry is not None
    header = section.entry.key_start
    own = [e for e in section.node.entries if e.key_start > header and text[e.key_start] != "["
           and e.key_end > e.key_start]
    known = section.entry.key_end > section.entry.key_start  # else an implicit table: no header, no `=`
    if known and text.startswith("[", header):
        return _toml_after_lines(document, section, own, prefix="")
    if known and text.startswith("{", section.node.start):
        return _toml_inline(document, section, own)
    dotted = [e for e in section.node.entries if e.key_end > e.key_start]
    if not dotted:
        raise ValueError(f"{document.path}: cannot tell where {'.'.join(section.path)} is written")
    written = text[dotted[-1].key_start:dotted[-1].key_end]
    if not written.endswith("." + dotted[-1].key) and not written.endswith(". " + dotted[-1].key):
        raise ValueError(f"{document.path}: cannot extend the dotted keys of {'.'.join(section.path)}")
    prefix = written[: len(written) - len(dotted[-1].key)]
    return _toml_after_lines(document, section, dotted, prefix=prefix)


def _toml_after_lines(document: Document, section: _Section, own: list[Entry], prefix: str) -> Edit:
    text = document.text
    nl = _newline(text)
    assert section.entry is not None
    if own:
        last = max(own, key=lambda e: e.value.end)
        at = last.removal[1] if last.removal else _line_end(text, last.value.end)
        indent = text[_line_start(text, last.key_start):last.key_start]
        separator = text[last.key_end:last.value.start] or " = "
    else:
        at = _line_end(text, section.entry.key_end)
        indent, separator = "", " = "
    lines = "".join(f"{indent}{prefix}{_toml_key(k)}{separator}{_literal('toml', v)}{nl}" for k, v in section.keys)
    lead = nl if at == len(text) and text and not text.endswith("\n") else ""
    return Edit(at, at, lead + lines)


def _toml_inline(document: Document, section: _Section, own: list[Entry]) -> Edit:
    assert section.node is not None
    pairs = [f"{_toml_key(k)} = {_literal('toml', v)}" for k, v in section.keys]
    if own:
        last = max(own, key=lambda e: e.value.end)
        return Edit(last.value.end, last.value.end, "".join(f", {p}" for p in pairs))
    brace = section.node.start + 1
    return Edit(brace, brace, ", ".join(pairs))


def _yaml_indent_unit(text: str) -> int:
    """The file's indentation step: the smallest indentation of a non-blank, non-comment line, or 2."""
    widths = [len(line) - len(line.lstrip(" ")) for line in text.split("\n")
              if line.strip() and not line.lstrip().startswith("#")]
    positive = [w for w in widths if w > 0]
    return min(positive) if positive else 2


def _yaml_insert(document: Document, section: _Section) -> Edit:
    """After the last line that belongs to the mapping's last entry, at the column of the mapping's keys."""
    text = document.text
    node = section.node
    assert node is not None
    if not node.entries or text.startswith("{", node.start):
        raise ValueError(f"{document.path}: {'.'.join(section.path)} is a flow mapping; cannot add a line to it")
    first, last = node.entries[0], node.entries[-1]
    column = first.key_start - _line_start(text, first.key_start)
    if text[_line_start(text, first.key_start):first.key_start].strip(" -"):
        raise ValueError(f"{document.path}: cannot tell the indentation of {'.'.join(section.path)}")
    at = _yaml_block_end(text, last, column)
    nl = _newline(text)
    separator = ": "
    if last.value.kind == "scalar" and last.value.start >= last.key_end:
        between = text[last.key_end:last.value.start]
        separator = between if "\n" not in between and between.startswith(":") else ": "
    lines = "".join(f"{' ' * column}{_yaml_key(k)}{separator}{_literal('yaml', v)}{nl}" for k, v in section.keys)
    lead = nl if at == len(text) and text and not text.endswith("\n") else ""
    return Edit(at, at, lead + lines)


def _yaml_block_end(text: str, last: Entry, column: int) -> int:
    """The offset just after the last content line of `last`'s block: the lines after its key that are
    indented deeper than `column` (or, for a sequence, dashes at `column`), not counting trailing blank and
    comment lines (those belong to whatever follows)."""
    end = _line_end(text, last.key_start)
    position = end
    sequence_value = last.value.kind == "seq"
    while position < len(text):
        line_end = _line_end(text, position)
        line = text[position:line_end].rstrip("\r\n")
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if stripped and not stripped.startswith("#"):
            inside = indent > column or (sequence_value and indent == column and stripped.startswith("-"))
            if not inside:
                break
            end = line_end
        elif stripped.startswith("#") and indent <= column:
            break
        position = line_end
    return end


def _json_insert(document: Document, section: _Section) -> Edit:
    """After the object's last member, on its own line with that member's indentation when the object is
    written over several lines, else on the same line after `, `."""
    text = document.text
    node = section.node
    assert node is not None
    members = [(k, v) for k, v in section.keys]
    if not node.entries:
        return _json_fill_empty(document, node, members)
    last = node.entries[-1]
    separator = text[last.key_end:last.value.start]
    line_start = _line_start(text, last.key_start)
    if "\n" in text[node.start:last.key_start] and not text[line_start:last.key_start].strip():
        joiner = "," + _newline(text) + text[line_start:last.key_start]
    else:
        joiner = ", "
    body = "".join(f"{joiner}{json.dumps(k, ensure_ascii=False)}{separator}{_literal('json', v)}" for k, v in members)
    return Edit(last.value.end, last.value.end, body)


def _json_fill_empty(document: Document, node: Node, members: Sequence[tuple[str, object]]) -> Edit:
    """Members for an empty object: `{}` gets them inline; an object whose braces stand on separate lines
    gets them on their own lines, one indentation step deeper than the closing brace."""
    text = document.text
    pairs = [f"{json.dumps(k, ensure_ascii=False)}: {_literal('json', v)}" for k, v in members]
    closing = node.end - 1
    if "\n" not in text[node.start:closing]:
        return Edit(node.start + 1, node.start + 1, ", ".join(pairs))
    nl = _newline(text)
    indent = text[_line_start(text, closing):closing]
    step = _json_indent_unit(document)
    body = "".join(f"{',' if index else ''}{nl}{indent}{step}{pair}" for index, pair in enumerate(pairs))
    return Edit(node.start + 1, node.start + 1, body)


def _json_indent_unit(document: Document) -> str:
    """The indentation of the root object's members (one step), or two spaces."""
    root = document.tree
    text = document.text
    if root is not None and root.kind == "map" and root.entries:
        key = root.entries[0].key_start
        indent = text[_line_start(text, key):key]
        if indent and not indent.strip():
            return indent
    return "  "


def _json_create(document: Document, root: Node | None, section: _Section) -> Edit:
    """A new "trainer_config" member of the root object, nested one indentation step deeper."""
    text = document.text
    if root is None or root.kind != "map":
        raise ValueError(f"{document.path}: the JSON document is not an object")
    if not root.entries:
        inner = ", ".join(f"{json.dumps(k)}: {_literal('json', v)}" for k, v in section.keys)
        return Edit(root.start + 1, root.start + 1, f'"trainer_config": {{{inner}}}')
    last = root.entries[-1]
    line_start = _line_start(text, last.key_start)
    separator = text[last.key_end:last.value.start]
    multiline = "\n" in text[root.start:last.key_start] and not text[line_start:last.key_start].strip()
    if not multiline:
        inner = ", ".join(f"{json.dumps(k)}{separator}{_literal('json', v)}" for k, v in section.keys)
        return Edit(last.value.end, last.value.end, f', "trainer_config"{separator}{{{inner}}}')
    nl = _newline(text)
    indent = text[line_start:last.key_start]
    step = indent or "  "  # the root's members are indented by one step
    inner = ("," + nl).join(f"{indent}{step}{json.dumps(k)}{separator}{_literal('json', v)}" for k, v in section.keys)
    body = f",{nl}{indent}\"trainer_config\"{separator}{{{nl}{inner}{nl}{indent}}}"
    return Edit(last.value.end, last.value.end, body)
