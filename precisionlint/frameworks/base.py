"""What every framework module declares: evidence, vocabulary, mapping.

A framework module (precisionlint/frameworks/<name>.py) has

    NAME       the framework's id, as Setting.framework carries it ("composer")
    TITLE      how messages name it ("MosaicML Composer")
    CONFIG_WORDS, PYTHON_WORDS  bytes that a config (or a Python file) it reads a setting from holds: the engine's
               prefilter reads no file that holds none of them, nor any rule's words (checks/catalog.py copies them)
    attribute(root, facts) -> Iterator[Section]
               its evidence: the sections of a config tree it reads, each with a confidence and the evidence
               in words. A section nobody claims is not checked by framework rules: silence, not a guess.
    VOCABULARIES  {canonical setting name: Vocabulary}: the values it accepts, its legacy spellings, what
               each value means (a Mode), and how a rejected value is named and corrected.
    rows in each Section: where, inside the section, each canonical setting is spelled (the mapping).

Checks never see key names or formats: they get Settings carrying `framework`, `confidence` and `evidence`,
and ask `vocabulary(setting)` what the value means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Confidence
from precisionlint.core.patterns import lazy_pattern
from precisionlint.frameworks.call import Call as Call  # where it was declared; a Python file's check reads it there

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

CERTAIN = Confidence.CERTAIN
LIKELY = Confidence.LIKELY


class Mode(NamedTuple):
    """What a precision setting means, whatever the framework: the compute dtype and whether the weights
    stay in float32 ("mixed", with autocast or a master copy) or are themselves that dtype ("true")."""

    dtype: str  # "fp16" | "bf16" | "fp32" | "fp64" | "fp8"
    kind: str  # "mixed" | "true"


class Row(NamedTuple):
    """(framework, key path inside the section) -> canonical setting name. A row whose value may be a mapping
    (Lightning's `strategy:` written as the strategy's arguments) names a `summary` that reads the mapping as the
    scalar it stands for, or None when it cannot tell; without one, only scalar values are settings."""

    framework: str
    path: tuple[str, ...]
    name: str
    summary: Callable[[Any], Any] | None = None


class Section(NamedTuple):
    """One mapping of a config file attributed to a framework, on evidence."""

    framework: str
    scope: str  # groups the settings of one object: "trainer", "deepspeed", "hf.deepspeed", ...
    node: Any  # precisionlint.sources.tree.Node (a map)
    path: tuple[str, ...]  # the keys leading to the section, outermost first
    rows: tuple[Row, ...]
    confidence: Confidence
    evidence: str


class Facts:
    """What the whole file says about its consumer, computed once per file and only when asked."""

    def __init__(self, path: str = "", text: str = "", fmt: str = "") -> None:
        self.path = path.replace("\\", "/")
        self.text = text
        self.format = fmt
        self._tags: frozenset[str] | None = None

    @property
    def hyperpyyaml_tags(self) -> frozenset[str]:
        """HyperPyYAML tags in the file (`!new:`, `!name:`, `!ref`, `!apply:`, ...): SpeechBrain's hparams loader."""
        if self._tags is None:
            found = _hyperpyyaml_tags(self.text) if self.format == "yaml" and "!" in self.text else set()
            self._tags = frozenset(found)
        return self._tags

    @property
    def folder_names(self) -> tuple[str, ...]:
        return tuple(part.lower() for part in self.path.split("/")[:-1])

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1].lower()


# A HyperPyYAML tag: at the start of the text, or after a blank, `[`, `{`, `,` or `:` that no earlier tag took as
# its own last character. The tags are found with a search for `!` (a pattern that starts with a choice of
# characters tries a match at every position: most of the time of reading SpeechBrain's hparams files).
_TAG = lazy_pattern(globals(), "_TAG", r"!(?:new|name|apply|module):|!ref\b|!copy\b|!include:|!tuple\b|!PLACEHOLDER\b")
_BEFORE_TAG = lazy_pattern(globals(), "_BEFORE_TAG", r"[\s\[{,:]")


def _hyperpyyaml_tags(text: str) -> set[str]:
    """The tags that a findall of `(?:^|[\\s\\[{,:])(<tag>)` finds (matches that do not overlap, left to right)."""
    found: set[str] = set()
    taken = 0  # where the previous match ended: a character before it cannot start another one
    for match in _TAG.finditer(text):
        start = match.start()
        if start == 0 or (start - 1 >= taken and _BEFORE_TAG.match(text, start - 1)):
            found.add(match.group())
            taken = match.end()
    return found


class Vocabulary(NamedTuple):
    """The values a framework accepts for one setting, and what to say about the others."""

    framework: str
    title: str  # "Composer", "SpeechBrain", ...
    key: str  # the setting as the framework spells it, for messages ("precision", "mixed_precision", "dtype")
    accepted: tuple[Any, ...]  # the current spellings, in the order messages list them
    canonical: Callable[[Any], Any]  # a value -> the accepted spelling it means, or None if rejected
    modes: dict[Any, Mode]  # accepted spelling -> meaning
    rejection: str  # what happens to a rejected value: "raises ValueError when the Trainer is built"
    legacy: dict[Any, Any] = {}  # old spellings still accepted -> the current spelling
    source: str = ""  # where the vocabulary is defined (cited in rule docs)
    suggest: Callable[[Any], list[Any]] | None = None  # replaces the dtype-keeping suggestions (booleans)

    def accepts(self, value: Any) -> bool:
        return self.canonical(value) is not None

    def mode(self, value: Any) -> Mode | None:
        canonical = self.canonical(value)
        return self.modes.get(canonical) if canonical is not None else None

    def suggestions(self, value: Any) -> list[Any]:
        """Accepted spellings that keep the dtype the user wrote (never fp16 for bf16): one when the dtype
        and kind pin it down, several when only the dtype does, none when the value names no dtype."""
        if self.suggest is not None:
            return self.suggest(value)
        return same_dtype_suggestions(value, self.accepted, self.modes)

    def listed(self) -> str:
        return ", ".join(repr(v) for v in self.accepted)


def exact(values: Iterable[Any], legacy: dict[Any, Any] | None = None,
          fold_case: bool = False) -> Callable[[Any], Any]:
    """canonical() for a vocabulary of exact spellings (strings compared after lower-casing if fold_case)."""
    accepted = tuple(values)
    old = dict(legacy or {})

    def canonical(value: Any) -> Any:
        if isinstance(value, bool):
            return None
        probe = value.lower() if fold_case and isinstance(value, str) else value
        if isinstance(probe, (str, int)):
            if probe in accepted and not isinstance(probe, bool):
                return probe
            if probe in old:
                return old[probe]
        return None

    return canonical


_TRUE_WORDS = frozenset({"true", "yes", "on", "y", "t", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "n", "f", "0"})


def lax_boolean(extra: tuple[Any, ...] = ()) -> Callable[[Any], Any]:
    """canonical() for a boolean field that pydantic / OmegaConf validate leniently: true/false, 1/0 and the
    words yes/no/on/off/y/n/t/f in any case are booleans; `extra` spellings (axolotl's "auto") are kept."""

    def canonical(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if value in extra:
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE_WORDS:
                return True
            if word in _FALSE_WORDS:
                return False
        return None

    return canonical


def boolean_suggestions(value: Any) -> list[Any]:
    """A dtype name written where a switch is expected (`bf16: bfloat16`) means "on"."""
    return [True] if dtype_of(value) is not None else []


# ---------------------------------------------------------------------------------------------------------------
# Dtype words: what number format a free-form spelling names, so that a suggestion never changes it.
# ---------------------------------------------------------------------------------------------------------------

_DTYPE_WORDS = {
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "f16": "fp16", "16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16", "bfloat": "bf16", "brainfloat16": "bf16", "bfp16": "bf16",
    "fp32": "fp32", "float32": "fp32", "f32": "fp32", "32": "fp32", "single": "fp32", "full": "fp32",
    "float": "fp32", "tf32": "fp32",
    "fp64": "fp64", "float64": "fp64", "f64": "fp64", "64": "fp64", "double": "fp64",
    "fp8": "fp8", "float8": "fp8", "f8": "fp8", "e4m3": "fp8", "transformer": "fp8", "te": "fp8",
}
_KIND_WORDS = {"mixed": "mixed", "amp": "mixed", "autocast": "mixed", "true": "true", "pure": "true"}


_PIECES = lazy_pattern(
    globals(), "_PIECES", r"(?:bfloat|brainfloat|bf|fp|float|f)?(?:16|32|64|8)(?![0-9])|[a-z]+|[0-9]+")


def words_of(value: Any) -> list[str]:
    """The words of a spelling: "amp_bf16" -> ["amp", "bf16"], "16mixed" -> ["16", "mixed"]."""
    words: list[str] = []
    for token in re.split(r"[^a-z0-9]+", str(value).strip().lower()):
        if not token:
            continue
        if token in _DTYPE_WORDS or token in _KIND_WORDS:
            words.append(token)
        else:
            words.extend(_PIECES.findall(token))
    return words


def dtype_of(value: Any) -> str | None:
    """The number format a spelling names ("amp_bf16" -> "bf16", "half" -> "fp16"), or None if it names none
    or several."""
    if isinstance(value, bool) or value is None:
        return None
    words = words_of(value)
    found = {_DTYPE_WORDS[w] for w in words if w in _DTYPE_WORDS}
    return found.pop() if len(found) == 1 else None


def kind_of(value: Any) -> str | None:
    words = words_of(value)
    kinds = {_KIND_WORDS[w] for w in words if w in _KIND_WORDS}
    return kinds.pop() if len(kinds) == 1 else None


def same_dtype_suggestions(value: Any, accepted: Iterable[Any], modes: dict[Any, Mode]) -> list[Any]:
    dtype = dtype_of(value)
    if dtype is None:
        return []
    candidates = [v for v in accepted if v in modes and modes[v].dtype == dtype]
    if len(candidates) > 1:
        kind = kind_of(value)
        # A bare 16-bit dtype means mixed precision in every framework's own legacy mapping (Lightning's 16).
        if kind is None and dtype in ("fp16", "bf16"):
            kind = "mixed"
        narrowed = [v for v in candidates if modes[v].kind == kind] if kind else []
        if narrowed:
            candidates = narrowed
    return candidates


# ---------------------------------------------------------------------------------------------------------------
# Small helpers on the format-neutral tree (precisionlint.sources.tree).
# ---------------------------------------------------------------------------------------------------------------

def scalar(node: Any, key: str) -> Any:
    """The scalar value under `key` of a map node, or None (absent, not a scalar, not a map)."""
    if node is None or node.kind != "map":
        return None
    entry = node.get(key)
    if entry is None or entry.value.kind != "scalar":
        return None
    return entry.value.value


def child_map(node: Any, key: str) -> Any:
    if node is None or node.kind != "map":
        return None
    entry = node.get(key)
    if entry is None or entry.value.kind != "map":
        return None
    return entry.value


def normalized_keys(node: Any) -> set[str]:
    """Keys with dashes read as underscores (GPT-NeoX and argparse-style configs accept both)."""
    return {key.replace("-", "_") for key in node.keys()} if node is not None and node.kind == "map" else set()


def described(keys: Iterable[str], limit: int = 3) -> str:
    shown = sorted(keys)[:limit]
    return ", ".join(f"`{k}`" for k in shown)
