"""One `check` run: discover files, resolve targets, run the engine, filter, and apply fixes.

Kept apart from cli.py so that tests and other tools can run a check without click, and apart from
the engine (precisionlint.engine), which knows one file at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from precisionlint.checks import Rule, all_rules
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Severity
from precisionlint.run.config import Config, ConfigError, ConfigFinder, UsageError

if TYPE_CHECKING:
    from typing import Any


class FileSettings:
    """What one configuration means for the files it governs."""

    def __init__(self, config: Config, rules: list[Rule], gpus: tuple[Any, ...], fail_on: Severity) -> None:
        self.config = config
        self.rules = rules
        self.gpus = gpus
        self.fail_on = fail_on


SettingsFor = Callable[[Config], FileSettings]


class StdinSource:
    """`check -`: the text comes from standard input; `display` (from --stdin-filename) gives its format, its
    configuration and the name in reports."""

    def __init__(self, data: bytes, display: str) -> None:
        self.data = data
        self.display = display


class RunRequest:
    def __init__(
        self,
        paths: list[str],
        config: Config,
        rules: list[Rule],
        gpu_names: list[str] | None = None,
        fix: bool = False,
        unsafe_fixes: bool = False,
        diff: bool = False,
        force_exclude: bool = False,
        jobs: int | None = None,
        progress: bool = True,
        cache: bool = False,  # results kept between runs (the command line turns it on unless --no-cache)
        settings_for: SettingsFor | None = None,
        stdin: StdinSource | None = None,
        explicit_config: bool = False,
        adjust_config: Callable[[Config], None] | None = None,
        digests: bool = True,
    ) -> None:
        self.paths = paths
        self.config = config
        self.rules = rules
        self.gpu_names = gpu_names if gpu_names is not None else []
        self.fix = fix
        self.unsafe_fixes = unsafe_fixes
        self.diff = diff
        self.force_exclude = force_exclude
        self.jobs = jobs
        self.progress = progress
        self.cache = cache
        # Per-file configuration: given, each file is checked with the settings of its nearest configuration
        # (settings_for turns a Config into rules, GPUs and the fail-on threshold); without it, `config` and
        # `rules` apply to every file.
        self.settings_for = settings_for
        self.stdin = stdin
        self.explicit_config = explicit_config  # --config: that file governs every file
        # What the command line sets over every configuration (--config KEY=VALUE, --exclude): applied to each
        # configuration found, before its excludes are used.
        self.adjust_config = adjust_config
        # Whether the outcome names the content each reported file was checked in (RunOutcome.digests), which
        # --add-noqa compares before it edits a file: the run keeps a digest per analysed file until then.
        self.digests = digests


class RunOutcome:
    def __init__(
        self,
        findings: list[Finding],
        errors: list[str],  # one line each: missing paths and the like
        internal_error: bool,
        rules_for_output: list[Rule],
        files_checked: int = 0,
        fixed: int = 0,
        diff_text: str | None = None,
        failing: int | None = None,
    ) -> None:
        self.findings = findings
        self.errors = errors
        self.internal_error = internal_error
        self.rules_for_output = rules_for_output
        self.files_checked = files_checked
        self.fixed = fixed
        self.diff_text = diff_text
        # Findings at or above their file's fail-on threshold (None: the caller compares with one threshold).
        self.failing = failing
        self.fixed_text: str | None = None  # `check - --fix`: the fixed text, for stdout
        self.groups: list[tuple[FileSettings, Sequence[Any]]] = []  # per configuration: its files (--show-files)
        self.unread = 0  # config files with precision keys that no framework was identified to read
        self.fixes_applied: list[Finding] = []  # --fix: the findings it repaired (--show-fixes lists them)
        self.notes: list[str] = []  # lines for the end of the text summary (findings a baseline hides)
        self.warnings: list[str] = []  # one line each, for standard error: what the run did not do as configured
        # file (as displayed) -> the digest of the content it was analysed in (the files findings are in)
        self.digests: dict[str, str] = {}


def _targets(names: list[str]) -> tuple:
    if not names:
        return ()
    from precisionlint.hardware.gpu import UnknownGpuError
    from precisionlint.hardware.targets import resolve_targets

    try:
        return resolve_targets(names)
    except UnknownGpuError as exc:
        raise UsageError(str(exc)) from None


def plan(
    request: RunRequest, skipped: list[tuple[str, str]] | None = None
) -> tuple[list[tuple[FileSettings, Sequence[Any]]], list[str]]:
    """The files of the run grouped by the settings that govern them, and the errors of discovery. Walked
    links that lead nowhere are added to `skipped` as (path, why) when it is given (--show-files)."""
    from precisionlint.core.model import SourceFile
    from precisionlint.run.discover import discover

    config = request.config
    if request.stdin is not None:
        from precisionlint.sources import format_of

        fmt = format_of(request.stdin.display) or "python"
        return _group([SourceFile(request.stdin.display, request.stdin.display, fmt)], request), []
    found = discover(request.paths, config.root, config.exclude, config.respect_gitignore, request.force_exclude)
    errors = [f"{path}: no such file or directory" for path in found.missing] + found.errors
    if skipped is not None:
        skipped.extend(found.skipped)
    return _group(found.files, request), errors


def _named_folders(paths: list[str]) -> tuple[str, ...]:
    """The folders the user named: each path given (a file's own folder; not the working directory, which may be
    a home folder). A project with no boundary above a file ends at the highest of them that holds it
    (project.model)."""
    folders = []
    for path in paths:
        if path != "-":
            folders.append(path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)))
    return tuple(folders)


def run_check(request: RunRequest) -> RunOutcome:
    from precisionlint.project.model import ProjectModel, use

    # The run's project model: what its checks learn of the projects on disk, learnt once for the whole run
    # (its forked workers inherit it) and nothing from an earlier run in the same process.
    use(ProjectModel(tops=_named_folders(request.paths)))
    spare = None
    if request.stdin is None:
        from precisionlint.run.parallel import default_jobs, spare_worker

        # Forked before the files are found, so that no worker holds the tree's file list (parallel.spare_worker).
        spare = spare_worker(request.paths, request.jobs or default_jobs())
    try:
        return _run_check(request, spare)
    finally:
        if spare is not None:
            spare.close()  # not taken by a pool: it ends


def _run_check(request: RunRequest, spare: Any) -> RunOutcome:
    groups, errors = plan(request)
    outcome = RunOutcome([], errors, False, [], files_checked=sum(len(files) for _, files in groups))
    outcome.groups = groups
    if request.diff:
        outcome.diff_text = ""
    failing = 0
    from precisionlint.run.progress import progress_for

    # One group (one configuration): its files as discovery keeps them (run.listed), not a list of every file.
    every_file = groups[0][1] if len(groups) == 1 else [source for _settings, files in groups for source in files]
    with progress_for(outcome.files_checked, enabled=request.progress and request.stdin is None) as bar:
        for settings, files in groups:
            group = _run_group(settings, files, request, bar.advance, every_file, spare)
            outcome.findings.extend(group.findings)
            outcome.errors.extend(group.errors)
            outcome.warnings.extend(w for w in group.warnings if w not in outcome.warnings)
            outcome.digests.update(group.digests)
            outcome.internal_error = outcome.internal_error or group.internal_error
            outcome.fixed += group.fixed
            outcome.unread += group.unread
            outcome.fixes_applied.extend(group.fixes_applied)
            if group.diff_text is not None:
                outcome.diff_text = (outcome.diff_text or "") + group.diff_text
            if group.fixed_text is not None:
                outcome.fixed_text = group.fixed_text
            failing += sum(1 for f in group.findings if f.severity >= settings.fail_on)
    outcome.findings.sort(key=Finding.sort_key)
    outcome.rules_for_output = rules_for_output(outcome.findings)
    outcome.failing = failing
    return outcome


def _group(files: Sequence[Any], request: RunRequest) -> list[tuple[FileSettings, Sequence[Any]]]:
    """The files of the run, grouped by the configuration that governs each (usually one group: then the
    sequence discovery made, kept compact: run.listed)."""
    from precisionlint.run.listed import files_of

    if request.settings_for is None:
        return [(FileSettings(request.config, request.rules, _targets(request.gpu_names), request.config.fail_on),
                 files_of(files))] if files else []
    finder = ConfigFinder()
    if request.config.path is not None:
        finder.remember(request.config)  # the run's own configuration object, not a second copy of it
    by_config: dict[int, tuple[FileSettings, list[int]]] = {}  # the files of each configuration, by index
    named = {os.path.normpath(path) for path in request.paths}
    for index, source in enumerate(files):
        config = request.config if request.explicit_config else (finder.for_file(source.fs_path) or request.config)
        if request.adjust_config is not None:
            request.adjust_config(config)  # once per configuration (it remembers)
        if (config is not request.config and config.exclude and request.stdin is None
                and (request.force_exclude or os.path.normpath(source.fs_path) not in named)
                and _excluded_by(source.fs_path, config)):
            continue  # a nested project's own excludes hold for the files walked into it
        key = id(config)
        if key not in by_config:
            by_config[key] = (request.settings_for(config), [])
        by_config[key][1].append(index)
    if len(by_config) == 1:
        settings, indices = next(iter(by_config.values()))
        if len(indices) == len(files):  # every file, in one group: no list of them
            return [(settings, files_of(files))]
    return [(settings, [files[index] for index in indices]) for settings, indices in by_config.values()]


def _repaired(before: list[Finding], after: list[Finding]) -> list[Finding]:
    """The findings --fix repaired: those of `before` that `after` no longer has, by file, rule and message (a
    fix moves the lines below it, so positions are not compared)."""
    from collections import Counter

    left = Counter((f.path, f.code, f.message) for f in after)
    repaired = []
    for finding in before:
        key = (finding.path, finding.code, finding.message)
        if left[key]:
            left[key] -= 1
        else:
            repaired.append(finding)
    return repaired


def _excluded_by(fs_path: str, config: Config) -> bool:
    from precisionlint.run.config import glob_matches

    relative = _relative(fs_path, config.root)
    return any(glob_matches(relative, pattern) for pattern in config.exclude)


def _run_group(settings: FileSettings, files: Sequence[Any], request: RunRequest, advance: Any,
               every_file: Sequence[Any], spare: Any = None) -> RunOutcome:
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.options import EngineOptions
    from precisionlint.run.parallel import check_all, default_jobs
    from precisionlint.sources import Limits

    config = settings.config
    validate_per_file_ignores(config)  # before the run: a typo must not cost a full check first
    context_key = None
    # The key tells apart analyses that could be shared: a cached one, or another file's of this group. A group of
    # one file without the cache compares its key with nothing, and building it stats the pin files of every
    # folder up to the project's root (a third of a one-file check's own work).
    if request.cache or len(files) > 1:
        from precisionlint.run.context_key import context_function

        context_key = context_function(every_file, settings.rules)
    options = EngineOptions(
        rules=settings.rules,
        gpus=settings.gpus,
        limits=Limits(
            max_file_size=config.max_file_size,
            max_nodes=config.max_nodes,
            max_depth=config.max_depth,
            max_parse_time=config.max_parse_time,
            max_memory=config.max_memory,
        ),
        context_key=context_key,
    )
    warnings: list[str] = []
    digests: dict[str, str] | None = {} if request.digests else None
    if request.stdin is not None:
        results = [check_bytes(request.stdin.display, request.stdin.data, files[0].format, options)]
    else:
        jobs = request.jobs or default_jobs()
        cache = None
        if request.cache:
            from precisionlint.run.cache import ENVIRONMENT_VARIABLE, leads_outside, open_cache

            cache = open_cache(config.root, config.cache_dir, options)
            if cache is None and leads_outside(config.root, config.cache_dir):
                # Refused, not ignored: a cloned repository's configuration cannot make a run write elsewhere
                # on the machine; the user can (the environment is theirs).
                warnings.append(f"cache-dir {config.cache_dir!r} (in {config.label}) leads outside the "
                                f"project, so results are not cached; set {ENVIRONMENT_VARIABLE} to cache them "
                                "there")
        results = check_all(files, options, jobs, progress=advance, cache=cache, digests=digests, spare=spare)
        if cache is not None:
            cache.save()
    findings: list[Finding] = []
    internal = False
    unread = 0
    for source, result in zip(files, results, strict=True):
        internal = internal or result.internal_error
        unread += result.unread
        if not result.findings:
            continue
        ignored = ignored_codes(source.fs_path, config)
        findings.extend(f for f in result.findings if f.code not in ignored)
    findings.sort(key=Finding.sort_key)
    outcome = RunOutcome(findings, [], internal, rules_for_output(findings), files_checked=len(files))
    outcome.unread = unread
    outcome.warnings = warnings
    outcome.digests = digests if digests is not None else {}
    if request.fix or request.diff:
        from precisionlint.fix.apply import apply_fixes

        write = request.fix and not request.diff  # --diff wins and writes nothing

        def ignored_in(fs_path: str) -> set[str]:
            return ignored_codes(fs_path, config)

        before = list(outcome.findings)
        if request.stdin is not None:
            _fix_stdin(outcome, files[0], options, request.stdin, write, request.unsafe_fixes, ignored_in)
        else:
            apply_fixes(outcome, files, options, write, request.unsafe_fixes, ignored_in)
        if write:
            outcome.rules_for_output = rules_for_output(outcome.findings)  # those of what the fixes left
            if outcome.fixed:
                outcome.fixes_applied = _repaired(before, outcome.findings)
    return outcome


def _fix_stdin(outcome: RunOutcome, source: Any, options: Any, stdin: StdinSource, write: bool, unsafe: bool,
               ignored: Callable[[str], set[str]]) -> None:
    """Fixes of standard input: the same fixer, on a private copy, and the fixed text goes to stdout."""
    import tempfile

    from precisionlint.core.model import SourceFile
    from precisionlint.fix.apply import apply_fixes

    with tempfile.TemporaryDirectory(prefix="precisionlint-stdin-") as folder:
        scratch = os.path.join(folder, os.path.basename(source.display) or "stdin")
        with open(scratch, "wb") as handle:
            handle.write(stdin.data)
        apply_fixes(outcome, [SourceFile(scratch, source.display, source.format)], options, write, unsafe, ignored)
        if write:
            with open(scratch, "rb") as handle:
                outcome.fixed_text = handle.read().decode("utf-8", "surrogateescape")


def validate_per_file_ignores(config: Config) -> None:
    from precisionlint.checks import did_you_mean, expand_selector

    for pattern, selectors in config.per_file_ignores.items():
        unknown = [s for s in selectors if not expand_selector(s)]
        if unknown:
            where = f"{config.path}: " if config.path else ""
            raise ConfigError(f"{where}per-file-ignores: unknown rule {unknown[0]!r} for '{pattern}'"
                              f"{did_you_mean(unknown[0])}")


def ignored_codes(fs_path: str, config: Config) -> set[str]:
    """The codes per-file-ignores removes for this file (gitignore-style globs relative to the configuration's
    directory). Internal errors (PL009) are never ignored: they mean precisionlint itself failed, and the exit
    code must say so."""
    if not config.per_file_ignores:
        return set()
    from precisionlint.checks import expand_selector
    from precisionlint.run.config import glob_matches

    relative = _relative(fs_path, config.root)
    return {
        rule.code
        for pattern, selectors in config.per_file_ignores.items()
        if glob_matches(relative, pattern)
        for selector in selectors
        for rule in expand_selector(selector)
        if rule.code != "PL009"
    }


def _relative(fs_path: str, root: Path) -> str:
    try:
        return Path(fs_path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(fs_path).as_posix()


def rules_for_output(findings: list[Finding]) -> list[Rule]:
    codes = {f.code for f in findings}
    return [r for r in all_rules() if r.code in codes]
