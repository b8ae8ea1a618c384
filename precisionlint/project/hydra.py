"""Hydra `defaults:` lists: which config files a Hydra config composes, and the composed view of them.

Read, never run: each entry of a `defaults:` list names a config of a group (`- trainer: gpu` ->
`trainer/gpu.yaml` beside the config; `- /trainer: gpu` and `override /trainer: ddp` from the config root;
`- .@model.encoder: base` -> `base.yaml` beside it, placed under `model.encoder`; `- trainer@x: y` -> `trainer/y.yaml`
under `x`; `- default` -> `default.yaml` of the config's own group). `_self_` marks where the config's own keys
stand (at the end when it is not written); `optional` entries may be missing; `null`, interpolated (`${...}`) and
multi-select options are left out, since which config they pick is decided at run time. The config root is the
nearest folder above the config that holds the group's folder; a `hydra.searchpath` entry `file://DIR` is searched
too. An entry that resolves to no file is no link, never a finding.

The composed view is a list of (package, Document) in the order Hydra merges them (later wins): a rule asks it
for the value a dotted key has once composed, and where that value is written.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from precisionlint.core.model import Span
from precisionlint.sources.tree import root_map

if TYPE_CHECKING:
    from precisionlint.core.model import Document
    from precisionlint.project import Project
    from precisionlint.sources.tree import Node

_PACKAGE_HEADER = re.compile(r"^#\s*@package\s+(\S+)", re.MULTILINE)
_MAX_DEPTH = 16  # defaults lists that include each other deeper than this are not followed


class HydraDefault(NamedTuple):
    group: str  # "trainer", "model/generator", "" for a config of the config's own group
    option: str  # "gpu"
    package: str | None  # "@x" target as written, None when the default package applies
    absolute: bool  # the group starts with "/" (relative to the config root)
    optional: bool
    override: bool
    span: Span  # the entry as written (its option's value)


class Composed(NamedTuple):
    package: str  # where the file's keys land in the composed config ("" = the root)
    path: str  # the file on disk (the config itself for its own keys)
    document: Document
    via: Span | None  # the defaults entry of the checked config that brought it in (None: the config itself)


def is_hydra_config(document: Document) -> bool:
    """A YAML document whose top level has a `defaults:` sequence (Hydra's own syntax for composition)."""
    return _defaults_node(document) is not None


def _defaults_node(document: Document) -> Node | None:
    if document.format != "yaml" or "defaults" not in document.text:
        return None
    root = root_map(document.tree)
    if root is None:
        return None
    entry = root.get("defaults")
    if entry is None or entry.value.kind != "seq":
        return None
    return entry.value


def defaults(document: Document) -> list[HydraDefault | None]:
    """The entries of the document's `defaults:` list in order; None stands for `_self_`."""
    node = _defaults_node(document)
    if node is None:
        return []
    found: list[HydraDefault | None] = []
    for item in node.items:
        if item.kind == "scalar":
            value = item.value
            if value == "_self_":
                found.append(None)
            elif isinstance(value, str) and _plain(value.removeprefix("optional ").strip()):
                optional = value.startswith("optional ")
                name = value[len("optional "):].strip() if optional else value
                # `- /base` is the config `base` at the config root, never a path on the machine
                found.append(HydraDefault("", name.lstrip("/"), None, name.startswith("/"), optional, False,
                                          document.span_of(item.start, item.end)))
            continue
        if item.kind != "map" or len(item.entries) != 1:
            continue
        entry = item.entries[0]
        key = entry.key.strip()
        option = entry.value.value if entry.value.kind == "scalar" else None
        if not isinstance(option, str) or not _plain(option) or option.startswith("/"):
            continue  # null, a list (multi-select), a number or an interpolation: chosen at run time
        words = key.split()
        optional = "optional" in words[:-1]
        override = "override" in words[:-1]
        if not words or any(w not in ("optional", "override") for w in words[:-1]):
            continue
        group, _, package = words[-1].partition("@")
        absolute = group.startswith("/")
        group = group.strip("/")
        if group == ".":
            group = ""
        if not _plain(group or "x") or (package and not re.fullmatch(r"[\w.]+", package)):
            continue
        found.append(HydraDefault(group, option, package or None, absolute, optional, override,
                                  document.span_of(entry.value.start, entry.value.end)))
    return found


def _plain(text: str) -> bool:
    return bool(text) and "${" not in text and not text.startswith(("[", "{")) and ".." not in text \
        and bool(re.fullmatch(r"[\w./\-]+", text))


def _search_roots(document: Document, path: str) -> list[str]:
    """Folders named by `hydra: searchpath: [file://DIR]` (relative to the config's folder)."""
    root = root_map(document.tree)
    hydra = root.get("hydra") if root is not None else None
    if hydra is None or hydra.value.kind != "map":
        return []
    entry = hydra.value.get("searchpath")
    if entry is None or entry.value.kind != "seq":
        return []
    folders = []
    for item in entry.value.items:
        if item.kind == "scalar" and isinstance(item.value, str) and item.value.startswith("file://"):
            folder = item.value[len("file://"):]
            if folder and "${" not in folder:
                folders.append(os.path.normpath(os.path.join(os.path.dirname(path), folder)))
    return folders


def _config_file(folder: str, option: str) -> str | None:
    for suffix in (".yaml", ".yml"):
        candidate = os.path.join(folder, option + suffix)
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve_default(path: str, entry: HydraDefault, project: Project, extra_roots: list[str]) -> str | None:
    """The file a defaults entry of the config at `path` names; None when it does not resolve."""
    here = os.path.dirname(os.path.abspath(path))
    group = entry.group.replace("/", os.sep)
    if not entry.absolute:
        found = _config_file(os.path.join(here, group), entry.option)
        if found is not None or not entry.group:
            return found
    # From the config root: the nearest folder above that holds the group (up to the project root).
    boundary = os.path.abspath(project.root)
    folder = here
    for _ in range(_MAX_DEPTH):
        found = _config_file(os.path.join(folder, group), entry.option)
        if found is not None:
            return found
        if folder == boundary or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    for root in extra_roots:
        found = _config_file(os.path.join(root, group), entry.option)
        if found is not None:
            return found
    return None


def default_links(document: Document, path: str, project: Project) -> list[tuple[HydraDefault, str]]:
    """Each resolvable defaults entry with the file it names."""
    entries = [e for e in defaults(document) if e is not None]
    if not entries:
        return []
    roots = _search_roots(document, path)
    found = []
    for entry in entries:
        target = resolve_default(path, entry, project, roots)
        if target is not None and os.path.realpath(target) != os.path.realpath(path):
            found.append((entry, target))
    return found


def _own_package(document: Document, group_package: str) -> str:
    """Where a config's own keys land: its `# @package` header, else the package its group gives it."""
    head = document.text[:2048]
    match = _PACKAGE_HEADER.search(head)
    if match is not None:
        declared = match.group(1)
        if declared == "_global_":
            return ""
        if declared == "_group_":
            return group_package
        return declared
    return group_package


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def compose(document: Document, path: str, project: Project) -> list[Composed]:
    """The files a Hydra config composes with itself, in merge order (later wins). An `override` entry replaces
    the option of the same group in its own list. Files that cannot be loaded are left out. A config that is
    not a Hydra config composes only itself."""
    state = _State(project)
    _compose_into(state, document, path, "", "", None, 0)
    if state.pending_overrides & state.groups:
        # An override reaches a group that another config's list fills: what is composed then depends on merge
        # rules this reading does not follow, so only the config itself is certain. (Overrides of groups that
        # are not composed here, such as `override hydra/job_logging: colorlog`, change nothing we read.)
        return [part for part in state.result if part.via is None]
    return state.result


class _State:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.result: list[Composed] = []
        self.seen: set[str] = set()
        self.groups: set[str] = set()  # the groups composed, as paths from the config root ("trainer")
        self.pending_overrides: set[str] = set()  # overrides not applied in their own list


def _group_path(*parts: str) -> str:
    return "/".join(p.strip("/") for p in parts if p.strip("/"))


def _compose_into(
    state: _State, document: Document, path: str, prefix: str, package: str, via: Span | None, depth: int,
) -> None:
    """Compose the config at `path`, whose group is `prefix` (a path from the config root) and whose keys land
    in `package`."""
    key = os.path.realpath(path)
    if key in state.seen or depth > _MAX_DEPTH:
        return
    state.seen.add(key)
    own = package if depth == 0 else _own_package(document, package)
    entries = defaults(document)
    roots = _search_roots(document, path) if entries else []

    def absolute(entry: HydraDefault) -> str:
        return _group_path(entry.group) if entry.absolute else _group_path(prefix, entry.group)

    # An override names a group that another entry also fills: the override's option wins.
    overrides = {(absolute(e), e.package): e for e in entries if e is not None and e.override}
    applied: set[tuple[str, str | None]] = set()
    if None not in entries:
        entries = [*entries, None]  # `_self_` not written: the config's own keys come last
    for entry in entries:
        if entry is None:
            state.result.append(Composed(own, path, document, via))
            continue
        if entry.override:
            continue  # applied where the group is filled
        group = absolute(entry)
        chosen = overrides.get((group, entry.package), entry)
        applied.add((group, entry.package))
        target = resolve_default(path, chosen, state.project, roots)
        if target is None:
            continue
        linked = state.project.document(target)
        if linked is None or linked.format != "yaml":
            continue
        state.groups.add(group)
        # Without `@package` a config's keys land under its group's path; `@x` is relative to this config's.
        target_package = _join(own, entry.package) if entry.package is not None else group.replace("/", ".")
        _compose_into(state, linked, target, group, target_package, via if via is not None else chosen.span,
                      depth + 1)
    state.pending_overrides.update(g for (g, p) in overrides if (g, p) not in applied)


class ComposedValue(NamedTuple):
    value: Any
    node: Node
    path: str
    document: Document
    via: Span | None


def lookup(view: list[Composed], dotted: str) -> ComposedValue | None:
    """The composed value of `a.b.c` (the last file that sets it wins), with where it is written."""
    found: ComposedValue | None = None
    for part in view:
        root = root_map(part.document.tree)
        if root is None:
            continue
        if part.package:
            head = part.package.split(".")
            keys = dotted.split(".")
            if keys[:len(head)] != head:
                continue  # a group's keys land inside its package; other keys keep their values
            keys = keys[len(head):]
        else:
            keys = dotted.split(".")
        node, replaced = _walk(root, keys)
        if node is not None:
            found = ComposedValue(node.value if node.kind == "scalar" else None, node, part.path, part.document,
                                  part.via)
        elif replaced:
            found = None  # a later file sets a prefix of the key to a plain value (`strategy: ddp`)
    return found


def _walk(node: Node, keys: list[str]) -> tuple[Node | None, bool]:
    """The node at `keys`, and whether the walk stopped at a plain value set on a prefix of them."""
    current: Node = node
    for index, key in enumerate(keys):
        if current.kind != "map":
            return None, index > 0
        entry = current.get(key)
        if entry is None:
            return None, False
        current = entry.value
    return current, False
