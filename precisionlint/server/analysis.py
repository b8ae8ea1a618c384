"""What the language server knows about one buffer, without any LSP in it.

The server checks the text in the editor, not the file on disk, and must say exactly what `check` would say
about that text if it were saved: the same prefilter, engine, rules, limits, per-file ignores and excludes.
Everything here works on (path, text) and returns plain data, so it can be tested and benchmarked without a
client.

Configuration is found per file (the server sees files from many folders, where `check` starts from one
directory): walking up from the file's folder, the first `.precisionlint.toml`, `precisionlint.toml` or
`pyproject.toml` with a `[tool.precisionlint]` table wins, stopping at the repository root (a `.git` entry).
A configuration that cannot be used is reported once and the defaults apply, so that a typo in
`pyproject.toml` does not switch the editor's findings off without a word.
"""

from __future__ import annotations

import ast
import gc
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

from precisionlint.checks import Rule
from precisionlint.core.model import Document, Edit, Finding, Fix, Format, SourceFile
from precisionlint.engine.check import check_source
from precisionlint.engine.options import EngineOptions
from precisionlint.engine.results import FileResult
from precisionlint.run.config import CONFIG_NAMES, Config, ConfigError, UsageError, load_config
from precisionlint.sources import Limits, format_of

if TYPE_CHECKING:
    from precisionlint.sources.python_source import Reparse

# PEP 263: a coding cookie must stay on the first or second line, above any directive we add.
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
# The formats the server checks: every one `check` reads. A notebook's findings are positions in its code cells
# (as ruff reports them); the server places them in the cells or in the .ipynb text (see notebooks.py).
SERVED_FORMATS = frozenset({"toml", "yaml", "json", "python", "shell", "notebook"})
# Editors' language identifiers (VS Code's, Neovim's and Helix's names) for buffers whose name has no extension
# check reads; a format this version of check does not read is ignored.
LANGUAGE_FORMATS: dict[str, str] = {"python": "python", "yaml": "yaml", "toml": "toml", "json": "json",
                                    "jsonc": "json", "shellscript": "shell", "sh": "shell", "bash": "shell"}


class ProjectSettings:
    """One configuration file's settings, resolved once: the rules, the engine options, the target GPUs."""

    def __init__(self, config: Config, options: EngineOptions, error: str | None = None) -> None:
        self.config = config
        self.options = options
        self.error = error  # why the configuration could not be used (the defaults apply), or None


def _options(config: Config) -> EngineOptions:
    from precisionlint.cli.rule_selection import gpus_for, rules_for
    from precisionlint.run.runner import validate_per_file_ignores

    # The same resolution as `check` (select, extend-select, ignores, gpus and custom-gpus).
    rules: list[Rule] = rules_for(config, {})
    validate_per_file_ignores(config)
    gpus = gpus_for(config, {})
    limits = Limits(max_file_size=config.max_file_size, max_nodes=config.max_nodes, max_depth=config.max_depth,
                    max_parse_time=config.max_parse_time)
    return EngineOptions(rules=rules, gpus=gpus, limits=limits)


def settings_from(config_file: Path | None) -> ProjectSettings:
    """The settings of one configuration file (None: the defaults). Never raises: a configuration that cannot
    be used gives the defaults and an error to show."""
    from precisionlint.hardware.gpu import UnknownGpuError

    try:
        config = load_config(str(config_file)) if config_file is not None else Config(root=Path.cwd())
        return ProjectSettings(config, _options(config))
    except (ConfigError, UsageError, UnknownGpuError) as exc:
        message = str(exc)
    except Exception as exc:  # a bug must not stop the server: defaults, and say why
        message = f"internal error reading the configuration: {type(exc).__name__}: {exc}"
    if config_file is not None and str(config_file) not in message:
        message = f"{config_file}: {message}"
    defaults = Config(root=config_file.parent if config_file is not None else Path.cwd())
    return ProjectSettings(defaults, _options(defaults), error=message)


def _has_table(pyproject: Path) -> bool:
    try:
        from precisionlint.core.bounded_read import read_text

        text = read_text(pyproject, 10_000_000)
    except (OSError, UnicodeDecodeError):
        return False
    if "precisionlint" not in text:  # cheap: most pyproject files have no such table
        return False
    try:
        import tomllib

        data = tomllib.loads(text)
    except Exception:
        return True  # broken TOML that mentions us: let load_config report it
    tool = data.get("tool")
    return isinstance(tool, dict) and "precisionlint" in tool


def find_config_file(path: Path) -> Path | None:
    """The configuration file that governs `path`, or None for the defaults."""
    here = path.parent.resolve()
    for folder in (here, *here.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                continue
            if name != "pyproject.toml" or _has_table(candidate):
                return candidate
        if (folder / ".git").exists():
            break
    return None


class ProjectConfigs:
    """Settings per configuration file, and which file governs each folder; cleared when any changes."""

    def __init__(self, explicit: str | None = None) -> None:
        self.explicit = Path(explicit) if explicit else None
        self._by_folder: dict[Path, Path | None] = {}
        self._by_file: dict[Path | None, ProjectSettings] = {}

    def clear(self) -> None:
        self._by_folder.clear()
        self._by_file.clear()

    def config_file_for(self, path: Path) -> Path | None:
        if self.explicit is not None:
            return self.explicit
        folder = path.parent
        if folder not in self._by_folder:
            self._by_folder[folder] = find_config_file(path)
        return self._by_folder[folder]

    def for_file(self, path: Path) -> ProjectSettings:
        config_file = self.config_file_for(path)
        settings = self._by_file.get(config_file)
        if settings is None:
            settings = self._by_file[config_file] = settings_from(config_file)
        return settings

    def loaded(self) -> list[ProjectSettings]:
        return list(self._by_file.values())


def is_config_file(path: Path) -> bool:
    return path.name in CONFIG_NAMES


# ---------------------------------------------------------------------------------------------------------------
# Checking a buffer
# ---------------------------------------------------------------------------------------------------------------


class Analysis(NamedTuple):
    """One check of one buffer's text."""

    path: Path
    text: str
    format: Format | None
    findings: list[Finding]  # what `check` would report, after per-file ignores
    document: Document | None  # the parsed file (None: skipped by the prefilter, unparsable, excluded)
    settings: ProjectSettings | None
    ignored: frozenset[str]
    excluded: bool = False
    internal_error: bool = False
    reads: frozenset[str] = frozenset()  # real paths of the linked files the check read (a DeepSpeed JSON, ...)


def format_for(path: Path, language_id: str | None = None) -> Format | None:
    """The format `check` would read the file as; the editor's language only for names check has no rule for
    (an unsaved buffer, a config without an extension)."""
    found = format_of(path.name)
    if found is None and language_id:
        from precisionlint.sources import EXTENSIONS

        named = LANGUAGE_FORMATS.get(language_id.lower())
        if named in EXTENSIONS.values():
            found = cast(Format, named)
    return found


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` as `check` run from `root` shows it: a symbolic link by its own place, not its
    target's (a linked file belongs to the folder, and so the project, it is linked into)."""
    absolute = Path(os.path.abspath(path))
    for base in (Path(os.path.abspath(root)), root.resolve()):
        try:
            return absolute.relative_to(base).as_posix()
        except ValueError:
            continue
    try:  # the root reached through a link the editor's path does not take, or the other way round
        return Path(os.path.realpath(absolute.parent), absolute.name).relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def check_text(source: SourceFile, text: str, options: EngineOptions) -> FileResult:
    """Check `text` as if it were the file `source` on disk: what `check` does after reading the file (the size
    limit, the prefilter, the engine), on the editor's text."""
    from precisionlint.checks._meta import LIMIT_EXCEEDED
    from precisionlint.core.model import Span

    data = text.encode("utf-8", "surrogatepass")
    limit = options.limits.max_file_size
    if len(data) > limit:
        # The message `check` gives for a file over the limit (engine.reading.read_source).
        message = f"file is {len(data):,} bytes, over the {limit:,}-byte limit (max-file-size); not checked"
        finding = Finding(LIMIT_EXCEEDED.code, LIMIT_EXCEEDED.name, LIMIT_EXCEEDED.severity, source.display,
                          Span.point(1, 1), message)
        return FileResult(source.display, [finding])
    return check_source(source, options, data=data)


def _release_model(document: Document | None) -> None:
    """Break the reference cycles of the script model the rules built on `document` (scopes and their parents,
    regions and their uses), once its findings are taken. What an analysis keeps for later requests (the text,
    the parsed document for verifying fixes) holds no cycle, so a superseded analysis is freed as soon as the
    server lets it go: with the model kept, every change left about 28,000 objects in cycles for the collector
    to find, and the server's memory climbed with every change (67 -> 277 MB over 300 changes of a 2,000-line
    script). Fixes and suppressions check edited text afresh, with a model of their own."""
    if document is None:
        return
    document.drop_back_references()
    model = document.script_model
    if model is None:
        return
    collecting = gc.isenabled()
    gc.disable()  # as engine.results.release: no collection walks the model while it is taken apart
    try:
        model.release()
        del model
    finally:
        if collecting:
            gc.enable()


def _reparser(previous: Analysis | None) -> Reparse | None:
    """What gives a Python buffer's tree from its previous check's tree (server/reparse.py), if it has one."""
    document = previous.document if previous is not None else None
    if document is None or document.format != "python" or not isinstance(document.tree, ast.Module):
        return None
    old_path, old_text, old_tree = document.path, document.text, document.tree

    def reparse(path: str, text: str) -> ast.Module | None:
        if path != old_path:  # another file the check reads (a linked script): parsed as always
            return None
        from precisionlint.server.reparse import reparsed

        try:
            return reparsed(old_text, old_tree, text)
        except Exception:  # a bug here must not cost the check: the whole parse decides
            return None

    return reparse


def analyse(path: Path, text: str, configs: ProjectConfigs, language_id: str | None = None,
            previous: Analysis | None = None) -> Analysis:
    """What `check PATH` would report if `text` were saved at `path`. `previous`: the last check of the same
    buffer, whose tree spares parsing again the statements an edit did not touch."""
    from precisionlint.project.model import current
    from precisionlint.run.discover import matches_any
    from precisionlint.run.runner import ignored_codes
    from precisionlint.sources.python_source import offer_texts_to

    fmt = format_for(path, language_id)
    if fmt is None or fmt not in SERVED_FORMATS:
        return Analysis(path, text, None, [], None, None, frozenset())
    settings = configs.for_file(path)
    config = settings.config
    if config.exclude and matches_any(display_path(path, config.root), config.exclude):
        # As the pre-commit hook does (--force-exclude): an excluded file is not checked even when named.
        return Analysis(path, text, fmt, [], None, settings, frozenset(), excluded=True)
    # Shown as `check` run from the working directory shows it (the server starts in the workspace root):
    # the project model finds a file's project and linked files from this path.
    display = display_path(path, Path.cwd())
    offered = offer_texts_to(_reparser(previous))
    try:
        with current().recording() as reads:
            result = check_text(SourceFile(str(path), display, fmt), text, settings.options)
    finally:
        offer_texts_to(offered)
    _release_model(result.document)
    ignored = frozenset(ignored_codes(str(path), config))
    findings = sorted((f for f in result.findings if f.code not in ignored), key=Finding.sort_key)
    return Analysis(path, text, fmt, findings, result.document, settings, ignored,
                    internal_error=result.internal_error, reads=frozenset(reads))


# ---------------------------------------------------------------------------------------------------------------
# Fixes and suppressions, each verified on the text before it is offered
# ---------------------------------------------------------------------------------------------------------------


def verified_fix(analysis: Analysis, finding: Finding) -> Fix | None:
    """The finding's fix if `check --fix` would apply it to this text (the round-trip verification of
    precisionlint.fix.verify accepts it), else None: the editor never offers an edit that `--fix` would refuse."""
    fix = finding.fix
    if fix is None or not fix.edits or analysis.document is None or analysis.settings is None:
        return None
    from precisionlint.fix.plan import select_fixes

    # A notebook's fixes edit its JSON text (the document checked is the program of its cells), as for --fix.
    target = analysis.document.fix_document or analysis.document
    try:
        chosen = select_fixes(target, [fix], analysis.settings.options.limits)
    except Exception:  # a verifier bug: offer nothing rather than an unverified edit
        return None
    return fix if chosen else None


def fix_all_text(analysis: Analysis) -> str | None:
    """The text after every safe fix, as `check --fix` writes it (repeated passes until none applies), or None
    when nothing changes."""
    if analysis.settings is None or analysis.format is None or analysis.document is None:
        return None
    from precisionlint.fix.apply import fix_text

    display = analysis.document.path
    result = fix_text(display, analysis.text, analysis.format, analysis.settings.options, False, analysis.ignored)
    return result.new_text if result.new_text != analysis.text else None


def minimal_edit(old: str, new: str) -> Edit:
    """One edit that turns `old` into `new`, touching only the changed middle (so the editor keeps the cursor,
    folds and marks outside it)."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(start, end_old, new[start:end_new])


def _line_bounds(text: str, line: int) -> tuple[int, int]:
    """Offsets of the start of 1-based `line` and of its end (before the line break)."""
    start = 0
    for _ in range(line - 1):
        found = text.find("\n", start)
        if found == -1:
            return len(text), len(text)
        start = found + 1
    end = text.find("\n", start)
    end = len(text) if end == -1 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end


def can_suppress(analysis: Analysis, finding: Finding) -> bool:
    # Engine findings (unreadable, unparsable, over a limit, internal error) cannot be silenced inline, and
    # JSON has no comments (per-file-ignores is its way). Every other format takes a `#` comment; whether the
    # directive works there is verified before it is offered.
    # In a notebook the comment would go inside a cell's JSON string: not offered.
    return analysis.format not in (None, "json", "notebook") and not finding.code.startswith("PL00")


def line_suppression(analysis: Analysis, finding: Finding) -> Edit | None:
    """The edit that adds `# precisionlint: ignore[rule-name]` to the finding's line (or the rule to a directive
    already there), if it silences exactly this rule on this line and changes nothing else."""
    if not can_suppress(analysis, finding):
        return None
    text = analysis.text
    start, end = _line_bounds(text, finding.span.line)
    line = text[start:end]
    existing = re.search(r"precisionlint\s*:\s*ignore\s*\[([^\]]*)\]", line, re.IGNORECASE)
    if existing is not None:
        inside = existing.group(1).rstrip()
        separator = ", " if inside.strip() else ""
        at = start + existing.start(1) + len(inside)
        edit = Edit(at, at, f"{separator}{finding.name}")
    else:
        content_end = start + len(line.rstrip())
        edit = Edit(content_end, end, f"  # precisionlint: ignore[{finding.name}]")
    return edit if _silences(analysis, finding, edit, line_shift_from=None) else None


def file_suppression(analysis: Analysis, finding: Finding) -> Edit | None:
    """The edit that adds `# precisionlint: file-ignore[rule-name]` on its own line at the top of the file (after a
    `#!` line, and in Python an encoding line), if it silences exactly this rule in this file and changes nothing
    else."""
    if not can_suppress(analysis, finding):
        return None
    text = analysis.text
    newline = "\r\n" if "\r\n" in text else "\n"
    at = 0
    line_number = 1
    while line_number <= 2:
        start, end = _line_bounds(text, line_number)
        first = text[start:end]
        shebang = line_number == 1 and first.startswith("#!")
        if not (shebang or (analysis.format == "python" and _CODING.match(first))):
            break
        following = text.find("\n", start)
        at = len(text) if following == -1 else following + 1
        line_number += 1
    prefix = "" if at == 0 or text[at - 1] == "\n" else newline
    edit = Edit(at, at, f"{prefix}# precisionlint: file-ignore[{finding.name}]{newline}")
    return edit if _silences(analysis, finding, edit, line_shift_from=line_number) else None


def _silences(analysis: Analysis, finding: Finding, edit: Edit, line_shift_from: int | None) -> bool:
    """Whether applying `edit` removes every finding of this rule on this line (or in this file, for a file-wide
    directive) and leaves every other finding exactly as it was."""
    if analysis.settings is None or analysis.format is None:
        return False
    from precisionlint.fix.edits import apply_edits

    new_text = apply_edits(analysis.text, [edit])
    display = analysis.document.path if analysis.document is not None else str(analysis.path)
    source = SourceFile(str(analysis.path), display, analysis.format)
    result = check_text(source, new_text, analysis.settings.options)
    after = sorted(_key(f) for f in result.findings if f.code not in analysis.ignored)
    if line_shift_from is None:
        gone = {f for f in analysis.findings if f.code == finding.code and f.span.line == finding.span.line}
        expected = sorted(_key(f) for f in analysis.findings if f not in gone)
    else:
        kept = [f for f in analysis.findings if f.code != finding.code]
        expected = sorted(_key(f, 1 if f.span.line >= line_shift_from else 0) for f in kept)
    return after == expected


def _key(finding: Finding, shift: int = 0) -> tuple[str, int, int, str]:
    return (finding.code, finding.span.line + shift, finding.span.column, finding.message)


def findings_at(findings: Sequence[Finding], line: int, column: int) -> list[Finding]:
    """Findings whose span covers a 1-based (line, column) position (the end column included, so that a cursor
    just after a value still counts)."""
    hits = []
    for finding in findings:
        span = finding.span
        after_start = (line, column) >= (span.line, span.column)
        before_end = (line, column) <= (span.end_line, span.end_column)
        if after_start and before_end:
            hits.append(finding)
    return hits


def uri_path(path: str) -> Path:
    return Path(os.path.abspath(path))
