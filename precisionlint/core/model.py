"""Plain data every other module speaks: severities, spans, settings, findings, fixes.

Nothing here imports anything heavy; these types are created in the hot path of `check`. The immutable
records are NamedTuples rather than frozen dataclasses: they behave the same for every use here (fields,
equality, ordering, hashing, pickling) and cost a fraction of the start-up time to define, which every run
of `check` pays.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.lines import line_starts, position

if TYPE_CHECKING:
    from typing import Any, Literal, NamedTuple
else:
    # typing.NamedTuple's classes, built without importing typing; nor do they compile the fields' annotations
    # (strings, under the __future__ import) into ForwardRefs as typing's do (core/light_typing.py)
    from precisionlint.core.light_typing import NamedTuple


class Severity(enum.IntEnum):
    """Ordered so that `severity >= threshold` selects what fails a run."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or info)") from None


class Span(NamedTuple):
    """A region of a file. Lines and columns are 1-based; `end_column` is exclusive
    (the column just after the last character), as in SARIF."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int, width: int = 1) -> Span:
        return cls(line, column, line, column + max(width, 1))


if TYPE_CHECKING:
    Applicability = Literal["safe", "unsafe"]
else:
    Applicability = str  # one of those names: at run time only annotations name the type


class Edit(NamedTuple):
    """Replace text[start:end] (character offsets into the decoded file text) with `replacement`."""

    start: int
    end: int
    replacement: str


class Fix(NamedTuple):
    description: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "applicability": self.applicability,
            "edits": [{"start": e.start, "end": e.end, "content": e.replacement} for e in self.edits],
        }


SAME_FILE = ""  # Related.path of a place in the finding's own file


class Related(NamedTuple):
    """Another place a finding is about (the DeepSpeed JSON that a TrainingArguments call names, the earlier
    occurrence of a duplicated key): shown beside the finding and written as SARIF relatedLocations.

    An empty `path` (SAME_FILE) names the finding's own file. A file's findings are computed once per content and
    handed to every path that holds it (copies, cached results), so a place in the same file must not carry the
    path it was first found under: it takes the path of the finding it is attached to when written out."""

    path: str
    span: Span
    message: str

    def to_json(self, own_path: str = "") -> dict[str, Any]:
        return {
            "path": self.path or own_path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "message": self.message,
        }


class Finding(NamedTuple):
    code: str
    name: str
    severity: Severity
    path: str
    span: Span
    message: str
    fix: Fix | None = None
    related: tuple[Related, ...] = ()  # other locations the finding names (other files', earlier ones)
    cell: int | None = None  # notebooks: the code cell (from 1) whose line `span` counts, as ruff reports it
    # Why, and from what evidence: the explanation of the message and the provenance of its conclusion (which
    # framework reads the setting, and why we think so). Shown as `note:` lines under the finding, so that the
    # message itself says only what is wrong and what to do.
    notes: tuple[str, ...] = ()

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.span.line, self.span.column, self.code)

    def described(self) -> str:
        """The message with its notes, for outputs that hold one text per finding (GitHub annotations, SARIF,
        JUnit, an editor's diagnostic)."""
        return f"{self.message} ({'; '.join(self.notes)})" if self.notes else self.message

    def to_json(self) -> dict[str, Any]:
        data = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.label,
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
        }
        if self.related:  # only where there is some: readers of the older shape see no new key
            data["related"] = [r.to_json(self.path) for r in self.related]
        if self.cell is not None:
            data["cell"] = self.cell
        if self.notes:  # only where there is some, as "related"
            data["notes"] = list(self.notes)
        return data


class Confidence(enum.IntEnum):
    """How sure the attribution of a setting to its framework is (precisionlint.frameworks decides it from
    evidence: a Hydra `_target_`, a key set only that framework uses, an import). Checks read it to choose
    severity and fix safety: an error and a safe fix need CERTAIN."""

    LIKELY = 1
    CERTAIN = 2

    @property
    def label(self) -> str:
        return self.name.lower()


# Where a setting came from. "python" settings are literal keyword arguments of calls in scripts.
# "shell": launch scripts (their Document holds Launches in `tree` and no settings). "notebook": .ipynb files,
# loaded as the Python program of their code cells (the Document's format is "python").
if TYPE_CHECKING:
    Format = Literal["toml", "yaml", "json", "python", "shell", "notebook"]
else:
    Format = str  # one of those names: at run time only annotations name the type


class SourceFile(NamedTuple):
    """A file to check: where it is on disk, how to show it, and its format."""

    fs_path: str
    display: str
    format: Format


class Setting(NamedTuple):
    """One precision-relevant value found in a file, already mapped to a canonical name.

    name       canonical setting name (see frameworks.CANONICAL), e.g. "precision", "fp16", "loss_scale".
    value      the literal value as written (str, int, float, bool, None). `UNRESOLVED` when not a literal.
    framework  whose vocabulary the value is in: "lightning", "hf", "accelerate", "deepspeed", "torch".
    scope      groups settings that belong to one object (one table, one call, one DeepSpeed block), so
               checks such as conflicting-precision compare values within one scope only.
    key_path   the keys as written in the file, outermost first (for messages and fixes).
    span       the value's span; key_span the key's (for a keyword argument: the keyword).
    entry      the whole `key = value` entry as character offsets [start, end) of the document text,
               covering the full line(s) where the entry stands alone on its lines (used by removal fixes).
    confidence how sure it is that `framework` reads this setting (Confidence; CERTAIN for a resolved call).
    evidence   why the section was attributed to `framework`, in words (shown by `check --show-frameworks`).
    """

    name: str
    value: Any
    framework: str
    scope: str
    key_path: tuple[str, ...]
    span: Span
    key_span: Span
    value_offsets: tuple[int, int] = (0, 0)
    entry: tuple[int, int] | None = None
    format: Format = "toml"
    confidence: int = 2  # Confidence.CERTAIN
    evidence: str = ""
    # A value reached through the script (precisionlint.values.settings.Origin): where it was written, under which
    # condition; None for a value written where the framework reads it.
    origin: Any = None

    @property
    def resolved(self) -> bool:
        return self.value is not UNRESOLVED

    @property
    def key_text(self) -> str:
        return ".".join(self.key_path)


class _Unresolved:
    """Marker for a value that cannot be known statically (a variable, an f-string, a CLI flag)."""

    _instance: _Unresolved | None = None

    def __new__(cls) -> _Unresolved:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNRESOLVED"

    def __bool__(self) -> bool:
        return False


UNRESOLVED: Any = _Unresolved()


class NotYet(enum.Enum):
    """A derived field of a Document not computed yet, where None is an answer of its own."""

    NOT_YET = 0


NOT_YET = NotYet.NOT_YET


class Document:
    """A loaded file: its text, the canonical settings it holds, and the parsed tree for later passes.

    `tree` is the format's own parse result: the position tree of precisionlint.sources.tree for TOML and
    JSON, a list of them (one per YAML document) for YAML, or an `ast.Module` for Python.

    The other fields hold what later passes derive from the document, computed once and shared by every pass and
    rule that asks (None, or NOT_YET where None is an answer: not computed yet). Their values are objects of the
    layers above this one, typed here as Any and named in the comments.
    """

    def __init__(
        self, path: str, text: str, format: Format, settings: list[Setting] | None = None, tree: Any = None
    ) -> None:
        self.path = path
        self.text = text
        self.format = format
        self.settings: list[Setting] = settings if settings is not None else []
        self.tree = tree
        # Keys a YAML mapping repeats (loaded last-wins, as PyYAML does): (key, (line, column) of each occurrence).
        self.duplicate_keys: list[tuple[str, tuple[tuple[int, int], ...]]] = []
        # Where the document is on disk when that is not `path` (project.disk_path); nothing sets it yet.
        self.fs_path: str | None = None
        self._line_starts: list[int] | None = None  # line_starts; a loader may set its parser's own
        # The loaders (sources/)
        self.python_index: Any = None  # the whole tree's python_index.PythonIndex
        self.python_index_on_lines: tuple[Any, Any] | None = None  # (lines, PythonIndex pruned to those lines)
        self.preferred_quote: str | None = None  # the quote a Python file writes most (setting_edits)
        # A notebook: its findings, on the lines of the joined cells, as lines of each cell; and the document a
        # fix edits and verifies (the notebook's JSON text, not the program of its cells).
        self.remap_findings: Callable[[list[Finding]], list[Finding]] | None = None
        self.fix_document: Document | None = None
        # The frameworks' Python calls (frameworks/python_calls.py)
        self.setting_lines: list[int] | None | NotYet = NOT_YET  # the lines that may pass a setting (None: all)
        self.unresolved_values: list[tuple[Setting, Any]] = []  # (setting, its value's ast.expr): not literals
        # The value layer (values/settings.py)
        self.value_finder: Any = NOT_YET  # values.candidates.Finder, None for a document without a Python tree
        self.scopes: tuple[Any, Any, Any] | None = None  # (tree, script.scopes.ScopeTable, script.values.Resolver)
        self.reached_settings: list[Setting] | None = None  # a Setting per candidate value of unresolved_values
        self.value_origins: dict[Span, Any] | None = None  # span of a reached setting -> values.settings.Origin
        # The launch lines of the project that start this script (the engine sets the function: values.launched)
        self.launch_lines: Callable[[Document], list[Any]] | None = None
        # The training-step model (script.model.ScriptModel), built once for every script rule
        self.script_model: Any = None
        # The project around the file (project/)
        self.project: Any = None  # project.Project
        self.parents: dict[int, Any] | None = None  # id(ast node) -> its parent node (project.scripts)
        self.mentions: dict[tuple[str, ...], bool] | None = None  # whether the script reads these option names
        self.loaded_configs: dict[str, Any] | None = None  # name -> project.links.LoadedConfig
        # A config that a project's script loads (project.config_readers): the place a reader reads each setting
        # (a related location of its findings), and the reads that take a whole section (scope -> Read)
        self.reader_related: dict[Span, Related] | None = None
        self.complete_reads: dict[str, Any] | None = None
        self.reader_overrides: dict[str, Any] | None = None  # dotted key -> the Read of a reader that replaces it
        # A script's options whose value reaches a framework keyword (project.launch_options.Option), and whether
        # it builds a LightningCLI (project.lightning_cli)
        self.launch_options: list[Any] | None = None
        self.builds_lightning_cli: bool | None = None
        # Rules' shared derivations (checks/)
        self.rl_pairings: list[Any] | None = None  # checks._rl_dtypes.Pairing of the actor and rollout dtypes

    def drop_back_references(self) -> None:
        """Forget the derived data that refers back to this document (the value layer's Finder holds it), so that
        letting the document go frees it at once instead of leaving a reference cycle for the collector."""
        self.value_finder = NOT_YET

    def __repr__(self) -> str:
        return f"Document({self.path!r}, {self.format}, {len(self.settings)} settings)"

    def settings_named(self, name: str) -> list[Setting]:
        return [s for s in self.settings if s.name == name]

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based (line, column) position."""
        starts = self.line_starts
        return starts[line - 1] + column - 1

    @property
    def line_starts(self) -> list[int]:
        cached = self._line_starts
        if cached is None:
            cached = self._line_starts = line_starts(self.text)
        return cached

    @line_starts.setter
    def line_starts(self, starts: list[int]) -> None:
        """The lines as the document's parser counted them (old-Mac or mixed line endings)."""
        self._line_starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        return position(self.line_starts, offset)

    def span_of(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column, end_line, end_column)
