"""Loaders: one per format, each turning text into a Document with its position tree (the format layer: the
frameworks above read the canonical settings off the tree, frameworks/documents.py).

Parsers are imported lazily, so checking a TOML file never imports ruamel.yaml and vice versa.
"""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Format

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

EXTENSIONS: dict[str, Format] = {
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".py": "python",
    ".pyi": "python",
    ".sh": "shell",
    ".ipynb": "notebook",
}


def template_action(text: str) -> bool:
    """Whether `text` holds a template action: a `{{` with a `}}` after it (Helm, Jinja) or a `{%` with a `%}`.
    Plain string scans, linear in the text (a regex with two lazy runs would be quadratic on a long line of
    braces)."""
    for opening, closing in (("{{", "}}"), ("{%", "%}")):
        start = text.find(opening)
        if start >= 0 and text.find(closing, start + 2) >= 0:
            return True
    return False


def format_of(filename: str) -> Format | None:
    dot = filename.rfind(".")
    if dot == -1:
        return None
    return EXTENSIONS.get(filename[dot:].lower())


class SourceError(Exception):
    """The file cannot be parsed. `line`/`column` are 1-based, as the parser reported them."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)


class NewerSyntaxError(SourceError):
    """Python that only a newer interpreter can parse (reported as newer-python-syntax, not parse-error)."""


class NotCheckable(SourceError):
    """The file is valid input for another tool, not for this reader: a JSON template whose placeholders a
    script fills in before anything reads it, a Databricks notebook exported as `.py` with IPython lines.
    `check` skips it quietly, like a file the prefilter rejects, instead of reporting it as broken; other
    readers (advise --config, linked files) treat it as any file they cannot parse."""


class LimitError(Exception):
    """The file exceeds a per-file limit (nodes, depth): it is skipped and the limit reported."""


class Limits(NamedTuple):
    """Per-file limits; exceeding one is a limit-exceeded finding (PL003) and the file is not checked.

    The defaults bound what one file may cost, CPU time and memory, not how big an ordinary file may be: a
    generated 5 MB training script takes about 0.8 GB and 10 s of CPU to check (its `ast.parse` alone 0.75 GB
    and 5 s), a 5 MB YAML or a 20 MB JSON config less (benchmarks/big_files.py), and all are checked. What the
    limits stop is the pathological file: a YAML alias bomb, a megabyte of one dense literal, nesting thousands
    of levels deep."""

    max_file_size: int = 100_000_000  # bytes, before the file is read (the memory estimate decides the rest)
    max_nodes: int = 5_000_000  # tree nodes built or walked: about 2 GB of tree (YAML alias bombs)
    max_depth: int = 200  # nesting of a config tree
    max_parse_time: float = 60.0  # CPU seconds to parse and check one file; 0 turns the limit off
    max_memory: int = 2_000_000_000  # bytes one file's analysis may use, as estimated before it is parsed


DEFAULT_LIMITS = Limits()


def parse_document(path: str, text: str, fmt: Format, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Parse `text` into a Document with its tree, and no settings yet: reading the canonical settings off the
    tree is the frameworks' work (frameworks/documents.py load_document, what every reader of a file calls).
    Raises SourceError or LimitError."""
    if fmt == "toml":
        from precisionlint.sources.toml_source import load
    elif fmt == "yaml":
        from precisionlint.sources.yaml_check import load  # falls back to yaml_source where it must
    elif fmt == "json":
        from precisionlint.sources.json_source import load
    elif fmt == "shell":
        from precisionlint.sources.shell_source import load
    elif fmt == "notebook":
        from precisionlint.sources.notebook_source import load
    else:
        from precisionlint.sources.python_source import load
    return load(path, text, limits)
