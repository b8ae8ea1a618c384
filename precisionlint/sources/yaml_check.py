"""YAML for checking only: libyaml's parser (PyYAML's CParser), with the round-trip loader's results.

`check` needs each key's and value's position and each scalar's value, never a tree it can write back: only
--fix, --diff and --write need ruamel's round-trip tree, and fix.py loads it itself. Measured on the 1,305 YAML
files of 50 public training repositories that pass the prefilter (9.9 MB; benchmarks/run.py's docstring has the
table): ruamel's round-trip load 29.1 s of CPU, ruamel's compose alone 32.6 s, ruamel's safe load 27.6 s,
PyYAML's pure-Python compose 20.2 s, libyaml's compose 1.0 s (28x faster than the round-trip load).

The tree is built from libyaml's events as they are parsed (no composed graph of the whole file: a 5 MB config
peaks at 19 bytes per byte instead of 50), and no Python object is constructed from any tag, so it is as safe as
the safe loader. Scalars are resolved here with ruamel's own YAML 1.2 resolver (the round-trip loader's:
`yes` and `on` stay strings, `010` is 10), so values are the ones the round-trip path gives. Whatever this module
does not reproduce exactly is handed to that path (precisionlint.sources.yaml_source) whole, so its semantics,
messages and positions rule there: a file with anchors, aliases, merge keys, standard (`!!`) or verbatim tags or
directives, a tagged, duplicate or non-scalar key, a scalar of another type (timestamps, 0x1F, 1_000.5, .inf), a
carriage return or a U+FEFF (ruamel does not count it as a column; libyaml does), a file libyaml rejects, or no
libyaml at all (PyYAML is an optional speed-up, not a requirement). Local tags (HyperPyYAML's
`!ref <x>`, `!new:Class`, SpeechBrain's every hparams file) are read here as the round-trip tree has them: a
tagged scalar keeps its text, a tagged sequence lists no items. On the 524 YAML files with tags under /work/eco
both paths give the same results, and 420 of them now take this one (SpeechBrain's YAML: 3.5 s -> 0.6 s).
tests/test_yaml_check.py compares both paths on every YAML file of the rule cases.

ruamel itself is imported only when a file needs the round-trip path: the resolver's table is read from it once
per ruamel release and copied into yaml_scalar_table.py (_scalar_resolver says how), since importing
ruamel.yaml costs every worker of a check about 12 ms.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.lines import line_starts
from precisionlint.core.model import Document
from precisionlint.sources import Limits
from precisionlint.sources.tree import Entry, Node, NodeBudget, whole_line_range

if TYPE_CHECKING:
    from typing import Any

_STATE: dict[str, Any] = {}

# Text that may need a feature this path does not reproduce: anchors (&), aliases and merge keys (*, <<), tags
# (!), directives (%), complex keys (?), line ends other than \n, and U+FEFF (a byte-order mark left in the
# text). A false alarm only costs the slower path. _unusual() tests these, each pattern searched only when the
# text holds a character it needs (one pattern for them all tried a match at every position of every file: a
# seventh of the YAML time of SpeechBrain's files).
_COMPLEX_KEY = re.compile(r"^\s*\?(?:\s|$)", re.MULTILINE)
# At the start, or after a blank, [, { or ,: what may be an anchor, and a standard or verbatim tag.
_ANCHOR = re.compile(r"(?<![^\s\[{,])&\S")
_TAG = re.compile(r"(?<![^\s\[{,])(?:!!|!<)\S")

# After an empty value: blanks, line ends and comments, up to the next token.
_SAME_LINE_COMMENT = re.compile(r"[ \t]*#")
_SKIP_TO_TOKEN = re.compile(r"(?:[ \t\n]+|#[^\n]*)*")
_INT = re.compile(r"[-+]?[0-9]+")
_UNDERSCORED_INT = re.compile(r"[-+]?[0-9_]*[0-9][0-9_]*")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?")
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_STR = "tag:yaml.org,2002:str"
_MAX_REMEMBERED = 20_000  # plain scalar values kept per process, each of a text of at most _REMEMBERED_LENGTH
_REMEMBERED_LENGTH = 64


def _unusual(text: str) -> bool:
    """Whether the text may need the round-trip path (see above)."""
    if may_need_round_trip(text, anchors=False):
        return True
    return "&" in text and _ANCHOR.search(text) is not None and _anchored(text)


def may_need_round_trip(text: str, anchors: bool = True) -> bool:
    """_unusual without parsing: an `&` that looks like an anchor counts (unless `anchors` is false), even
    inside a block scalar. For the memory estimate of a big file, which the round-trip path would cost about
    four times as much as this one (engine.check.estimated_memory)."""
    if "\r" in text or "\ufeff" in text:
        return True
    if "%" in text and (text.startswith("%") or "\n%" in text):  # a directive
        return True
    if "?" in text and _COMPLEX_KEY.search(text):
        return True
    if ("!!" in text or "!<" in text) and _TAG.search(text) is not None:
        return True
    return anchors and "&" in text and _ANCHOR.search(text) is not None


def _anchored(text: str) -> bool:
    """Whether a node of the text has an anchor, as libyaml's parser reads it: an `&` that looks like one in the
    text is often inside a block scalar (`run.sh &> log` in a workflow's shell step), which the round-trip path
    would parse for nothing (ruamel's import and its parse: 21 files of the ecosystem corpus). A text libyaml
    rejects counts as anchored: the round-trip path reports it."""
    import yaml

    try:
        return any(getattr(event, "anchor", None) for event in yaml.parse(text, Loader=yaml.CSafeLoader))
    except Exception:
        return True


class _Unsupported(Exception):
    """This file needs the round-trip path."""


class _OtherType(str):
    """The tag of a plain scalar of a type this path does not read (a timestamp, 0x1F, 1_000.5, .inf)."""


_UNREAD = object()
_PLAIN_VALUES: dict[str, Any] = {}  # plain scalar text -> its value, or its _OtherType


def warm_up() -> None:
    """Import and set up the loader now (a worker about to be forked into several does it once for all)."""
    _tools()


class _Tools:
    """What this path uses of PyYAML, imported once: libyaml's parser, the event classes, YAMLError; and
    ruamel's resolver of a plain scalar's tag."""

    def __init__(self, yaml: Any, resolve: Resolve) -> None:
        from yaml.cyaml import CParser

        self.parser: Any = CParser  # its events only: composing and resolving tags are this module's
        self.resolve = resolve
        self.error: type[Exception] = yaml.YAMLError
        self.mapping_start, self.mapping_end = yaml.MappingStartEvent, yaml.MappingEndEvent
        self.sequence_start, self.sequence_end = yaml.SequenceStartEvent, yaml.SequenceEndEvent
        self.scalar, self.alias = yaml.ScalarEvent, yaml.AliasEvent
        self.document_start, self.stream_end = yaml.DocumentStartEvent, yaml.StreamEndEvent


def _tools() -> _Tools | None:
    """PyYAML's parts this path uses, or None without libyaml."""
    if "tools" not in _STATE:
        try:
            import yaml  # PyYAML

            if not getattr(yaml, "__with_libyaml__", False):
                raise ImportError("PyYAML without libyaml")
            _STATE["tools"] = _Tools(yaml, _scalar_resolver())
        except ImportError as exc:
            from precisionlint.core.memory import ran_out_of_memory

            if ran_out_of_memory(exc):
                # libyaml's module could not be mapped under a memory limit: not a PyYAML without libyaml. The
                # round-trip path would import ruamel under the same limit (once seen to spin for minutes).
                raise MemoryError("importing PyYAML's libyaml module") from exc
            _STATE["tools"] = None
    return _STATE["tools"]  # type: ignore[no-any-return]


# Texts whose tags the table lookup must agree on with ruamel's own call before it is used.
_SAMPLES = ("", "1", "-1", "+1", "0x1F", "0o17", "0b101", "1_000", "_", "1:20", "1.5", "1e3", ".inf", "-.inf",
            ".nan", "true", "True", "TRUE", "yes", "on", "null", "Null", "~", "2001-12-14",
            "2001-12-14t21:59:43.10-05:00", "=", "<<", "abc", "!x", "&a", "*a", "F", "N", "n", "t", "f", "16-mixed")


Resolve = Callable[[str], str]
if TYPE_CHECKING:
    # first character of a text -> (tag, compiled pattern), in ruamel's order
    Table = dict[str, list[tuple[str, Any]]]
else:
    Table = dict  # at run time only annotations name the type (core/light_typing.py)


def _lookup(table: Table, default: str) -> Resolve:
    def by_table(value: str) -> str:
        for tag, pattern in table.get(value[0] if value else "", ()):
            if pattern.match(value):
                return tag
        return default

    return by_table


def _table_resolver(resolver: Any, scalar: type) -> tuple[Resolve, Table | None, str]:
    """ruamel's implicit tag of a plain scalar text, with the table it looks up (None: ruamel's own call).
    The resolver's own call looks up the YAML version through three failed attribute look-ups for every scalar
    (half its cost, and the scalars of a file list of paths are mostly distinct); its pattern table for that
    version is read here once instead, and used only where it gives ruamel's answers on every sample (another
    ruamel release may arrange its resolver otherwise)."""

    def by_call(value: str) -> str:
        return str(resolver.resolve(scalar, value, (True, False)))

    try:
        versioned = resolver.versioned_resolver
        default = str(resolver.DEFAULT_SCALAR_TAG)
        if None in versioned or resolver.yaml_path_resolvers:
            return by_call, None, ""  # patterns for any first character, or path resolvers: not this lookup's shape
        table: Table = {first: [(str(tag), pattern) for tag, pattern in rows] for first, rows in versioned.items()}
    except Exception:
        return by_call, None, ""
    by_table = _lookup(table, default)
    try:
        agrees = all(by_table(value) == by_call(value) for value in _SAMPLES)
    except Exception:
        agrees = False
    return (by_table, table, default) if agrees else (by_call, None, "")


# ruamel's table, once its own resolver agreed with it, is copied into yaml_scalar_table.py by
# make_yaml_scalar_table.py (tests/test_yaml_check.py keeps the copy in step with the installed ruamel), with the
# size and CRC-32 of each ruamel resolver.py it was read from. A run whose YAML needs no round-trip then never
# imports ruamel: it reads the resolver.py that `import ruamel.yaml` would load (found without importing it) and
# uses the copy only when that file is one the copy was made from; any other ruamel is asked itself. Nothing is
# written at run time: an installed package is never modified.
_RESOLVER_READ_LIMIT = 1 << 20  # ruamel's resolver.py is about 15 kB; a larger one is not one the copy knows


def _resolver_file() -> str | None:
    """The ruamel/yaml/resolver.py that `import ruamel.yaml` would load, found without importing it: `ruamel` is
    a namespace package, and ruamel.yaml is the first regular package named yaml on its path."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("ruamel")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or ()) if spec is not None else ():
        package = os.path.join(folder, "yaml")
        if os.path.isfile(os.path.join(package, "__init__.py")):
            return os.path.join(package, "resolver.py")
    return None


def resolver_digest(path: str) -> str | None:
    """`size:crc32` of a resolver.py, or None when it cannot be read as a regular file of sensible size."""
    import stat
    import zlib

    try:
        # Not blocking: a FIFO in the resolver's place must not hang the run (it is refused below).
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(_RESOLVER_READ_LIMIT + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if len(data) > _RESOLVER_READ_LIMIT:
        return None
    return f"{len(data)}:{zlib.crc32(data):08x}"


def _copied_table() -> Resolve:
    from precisionlint.sources import yaml_scalar_table

    table: Table = {first: [(tag, re.compile(pattern, flags)) for tag, pattern, flags in rows]
                    for first, rows in yaml_scalar_table.TABLE.items()}
    return _lookup(table, yaml_scalar_table.DEFAULT)


def _scalar_resolver() -> Resolve:
    """ruamel's implicit tag of a plain scalar text: from the copied table when the installed ruamel is one it
    was copied from, else from ruamel itself (imported here)."""
    if "ruamel.yaml.resolver" not in sys.modules:
        located = _resolver_file()
        if located is not None:
            from precisionlint.sources import yaml_scalar_table

            if resolver_digest(located) in yaml_scalar_table.RESOLVER_DIGESTS:
                return _copied_table()
    from ruamel.yaml import resolver as ruamel_resolver
    from ruamel.yaml.nodes import ScalarNode

    return _table_resolver(ruamel_resolver.VersionedResolver(), ScalarNode)[0]


def load(path: str, text: str, limits: Limits) -> Document:
    from precisionlint.sources import yaml_source

    tools = _tools()
    if tools is None or _unusual(text):
        return yaml_source.load(path, text, limits)
    if yaml_source._flow_too_deep(text, limits.max_depth):
        return yaml_source.load(path, text, limits)  # its message for a broken file, else the same LimitError
    starts = line_starts(text)
    walker = _EventWalker(text, starts, NodeBudget(limits.max_nodes, limits.max_depth), tools)
    try:
        roots = walker.documents()
    except _Unsupported:
        return yaml_source.load(path, text, limits)  # its messages and positions for a broken file too
    document = Document(path=path, text=text, format="yaml", tree=roots)
    document.line_starts = starts
    return document


_UNFOUND = -1
_NO_MEMBERS: tuple[()] = ()  # every scalar's entries and items: read, never added to


class _Scalar(Node):
    """A scalar whose end is found when first asked for: finding it scans the text, and most scalars of a config
    are never shown or edited (SpeechBrain's 114 YAML files hold 33,573 keys and scalars)."""

    __slots__ = ("_end", "_flow", "_ends")
    _end: int

    def __init__(self, start: int, value: Any, flow: bool, ends: Any) -> None:
        # Node's fields, without the two empty lists Node.__init__ makes: a scalar holds no entries and no
        # items, and two lists are 112 bytes of each of a big config's scalars (a fifth of its tree).
        self.kind = "scalar"
        self.start = start
        self._end = _UNFOUND
        self.value = value
        self.entries = self.items = _NO_MEMBERS  # type: ignore[assignment]
        self._flow = flow
        self._ends = ends

    @property  # type: ignore[override]
    def end(self) -> int:
        if self._end == _UNFOUND:
            self._end = self._ends(self.start, self._flow)  # the start itself at the end of the text
        return self._end

    @end.setter
    def end(self, value: int) -> None:
        self._end = value


class _Entry(Entry):
    """An entry whose key end and removal range are found when first asked for (see _Scalar)."""

    __slots__ = ("_key_end", "_removal", "_flow", "_ends", "_text")
    _key_end: int

    def __init__(self, key: str, key_start: int, value: Node, flow: bool, ends: Any, text: str) -> None:
        self._flow = flow
        self._ends = ends
        self._text = text
        super().__init__(key, key_start, _UNFOUND, value, None)
        self._removal: tuple[int, int] | None | object = _UNREAD

    @property  # type: ignore[override]
    def key_end(self) -> int:
        if self._key_end == _UNFOUND:
            self._key_end = self._ends(self.key_start, self._flow, True)
        return self._key_end

    @key_end.setter
    def key_end(self, value: int) -> None:
        self._key_end = value

    @property  # type: ignore[override]
    def removal(self) -> tuple[int, int] | None:
        if self._removal is _UNREAD:
            child = self.value
            self._removal = None
            if not self._flow and child.kind == "scalar" and child.start >= self.key_end:
                self._removal = whole_line_range(self._text, self.key_start, child.end)
        return self._removal  # type: ignore[return-value]

    @removal.setter
    def removal(self, value: tuple[int, int] | None) -> None:
        self._removal = value


class _EventWalker:
    """The round-trip walker's conversion (yaml_source._Walker), from libyaml's events as they are parsed
    instead of loaded values. No composed graph of the whole file (nodes with two marks each: 33 bytes per byte
    of a big config) is held beside the tree, only the tree: an event carries what a composed node did (a
    scalar's text, style and marks; a collection's flow style).

    What composing the whole file first decided is kept: a file libyaml rejects anywhere, or with an alias (the
    composer refused an alias to no anchor, and anchored files never come here), goes to the round-trip path
    (_Unsupported) even where a limit of this walk is met earlier in the file."""

    def __init__(self, text: str, starts: list[int], budget: NodeBudget, tools: _Tools) -> None:
        from precisionlint.sources.yaml_source import _Walker

        self.text = text
        self.budget = budget
        self.scalar_end = _Walker(text, starts, budget)._scalar_end  # the same extents as the other path
        self.tools = tools
        self.Scalar = tools.scalar
        self.resolve = tools.resolve
        self.parser = tools.parser(text)

    def value(self, node: Any) -> Any:
        if type(node) is not self.Scalar:
            raise _Unsupported("a collection where a scalar is expected")
        text = node.value
        # Quoted, literal or folded: always a string. A local tag (HyperPyYAML's `!ref <x>`, `!name:f`): the
        # round-trip loader keeps the text.
        if node.style or self.text.startswith("!", node.start_mark.index):
            return text
        # A plain scalar's value depends on its text alone: ruamel's resolver has fixed implicit flags here, no
        # path resolvers, and without a loader always the default version (1.2). Each resolution costs that
        # version lookup (three failed attribute look-ups) and a list of patterns, and configs repeat their
        # scalars (SpeechBrain's 114 YAML files: 25,752 scalars, 1,605 distinct texts), so each text is read
        # once per process.
        value = _PLAIN_VALUES.get(text, _UNREAD)
        if value is _UNREAD:
            value = self.plain(text)
            if len(text) <= _REMEMBERED_LENGTH:  # long texts (paths, prose) seldom repeat
                if len(_PLAIN_VALUES) >= _MAX_REMEMBERED:
                    _PLAIN_VALUES.clear()  # a bound on memory over a huge tree; the hit rate stays high
                _PLAIN_VALUES[text] = value
        if type(value) is _OtherType:
            raise _Unsupported(f"a {value} scalar")
        return value

    def plain(self, text: str) -> Any:
        """The value of a plain scalar, or the _OtherType of one this path does not read."""
        tag = self.resolve(text)
        if tag == _STR:
            return text
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return text.lower() == "true"
        if tag == _INT_TAG and _INT.fullmatch(text):
            return int(text)
        if tag == _INT_TAG and _UNDERSCORED_INT.fullmatch(text):
            # `406_934` (OLMo's configs): ruamel drops every underscore and the sign, then reads the digits
            # (a text of underscores alone makes it fail: that stays with the round-trip path).
            return int(text.replace("_", ""))
        if tag == _FLOAT_TAG and _FLOAT.fullmatch(text):
            return float(text)
        return _OtherType(tag)

    def value_start(self, node: Any, flow: bool, key_column: int = -1) -> int:
        """Where the round-trip loader puts a value: its first character, or for an empty value (`key:` with
        nothing after it) the next token, where ruamel's parser notices the value is empty (libyaml puts it
        right after the colon)."""
        index = node.start_mark.index
        if type(node) is self.Scalar and node.value == "" and not node.style \
                and not self.text.startswith("!", index):  # a tagged empty value starts at its tag
            if flow:
                raise _Unsupported("an empty value in a flow collection")
            skipped = _SKIP_TO_TOKEN.match(self.text, index)  # always matches, if only the empty string
            following = skipped.end() if skipped else index
            if following < len(self.text) and _SAME_LINE_COMMENT.match(self.text, index):
                column = following - (self.text.rfind("\n", 0, following) + 1)
                if column >= key_column:  # another key of this mapping follows: the comment keeps the colon's end
                    return index
            return following
        return index



    def next(self) -> Any:
        try:
            event = self.parser.get_event()
        except (self.tools.error, ValueError, TypeError):
            raise _Unsupported("a file libyaml rejects") from None
        if type(event) is self.tools.alias:
            raise _Unsupported("an alias")
        return event

    def documents(self) -> list[Node]:
        from precisionlint.sources import LimitError

        roots: list[Node] = []
        stream_end, document_start = self.tools.stream_end, self.tools.document_start
        try:
            while True:
                event = self.next()
                if type(event) is stream_end:
                    return roots
                if type(event) is document_start:
                    roots.append(self.convert(self.next(), 0, 0))
        except LimitError:
            while type(self.next()) is not stream_end:  # the rest of the file, as composing read it first
                pass
            raise
        finally:
            self.parser.dispose()

    def skip(self, event: Any) -> None:
        """Read past the node that starts with `event` (its events, unconverted)."""
        tools = self.tools
        starts, ends = (tools.mapping_start, tools.sequence_start), (tools.mapping_end, tools.sequence_end)
        depth = 1 if type(event) in starts else 0
        while depth:
            kind = type(self.next())
            if kind in starts:
                depth += 1
            elif kind in ends:
                depth -= 1

    def convert(self, event: Any, depth: int, start: int, flow: bool = False) -> Node:
        self.budget.take(depth)
        text = self.text
        kind = type(event)
        if kind is self.tools.mapping_start:
            result = Node("map", start, start)
            entries = result.entries
            is_flow = bool(event.flow_style)
            seen: set[Any] = set()
            scalar_end, value, value_start, convert, read = (self.scalar_end, self.value, self.value_start,
                                                             self.convert, self.next)
            end = self.tools.mapping_end
            while True:
                key_event = read()
                if type(key_event) is end:
                    return result
                mark = key_event.start_mark
                k_start = mark.index
                if text.startswith("!", k_start):
                    raise _Unsupported("a tagged key")
                key = value(key_event)
                if key == "<<" and not key_event.style:
                    raise _Unsupported("a merge key")
                if key in seen:  # equal as Python keys (1, 1.0 and true are one key), as in the loaded mapping
                    raise _Unsupported("a duplicate key")  # the round-trip path decides what that means
                seen.add(key)
                value_event = read()
                v_start = value_start(value_event, is_flow, mark.column)
                child = convert(value_event, depth + 1, v_start, is_flow)
                entries.append(_Entry(str(key), k_start, child, is_flow, scalar_end, text))
        if kind is self.tools.sequence_start:
            result = Node("seq", start, start)
            # ruamel's round-trip tree keeps no positions for the items of a tagged sequence (`!apply:f [...]`),
            # so its walker lists none: the same here.
            tagged = text.startswith("!", event.start_mark.index)
            is_flow = bool(event.flow_style)
            items = result.items
            end = self.tools.sequence_end
            while True:
                item = self.next()
                if type(item) is end:
                    return result
                if tagged:
                    self.skip(item)
                else:
                    items.append(self.convert(item, depth + 1, self.value_start(item, True), is_flow))
        return _Scalar(start, self.value(event), flow, self.scalar_end)
