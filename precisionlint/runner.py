"""One `check` run: discover files, resolve targets, run the engine, filter, and apply fixes.

Kept apart from cli.py so that tests and other tools can run a check without click, and apart from
engine.py, which knows one file at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from precisionlint.checks import Rule, all_rules
from precisionlint.config import Config, ConfigError
from precisionlint.model import Finding


@dataclass
class RunRequest:
    paths: list[str]
    config: Config
    rules: list[Rule]
    gpu_names: list[str] = field(default_factory=list)
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    force_exclude: bool = False
    jobs: int | None = None
    progress: bool = True


@dataclass
class RunOutcome:
    findings: list[Finding]
    errors: list[str]  # one line each: missing paths and the like
    internal_error: bool
    rules_for_output: list[Rule]
    files_checked: int = 0
    fixed: int = 0
    diff_text: str | None = None


def _targets(names: list[str]) -> tuple:
    if not names:
        return ()
    import click

    from precisionlint.hardware import UnknownGpuError, resolve_targets

    try:
        return resolve_targets(names)
    except UnknownGpuError as exc:
        raise click.UsageError(str(exc)) from None


def run_check(request: RunRequest) -> RunOutcome:
    from precisionlint.discover import discover, matches_any
    from precisionlint.engine import EngineOptions, check_sources
    from precisionlint.parallel import default_jobs
    from precisionlint.sources import Limits

    config = request.config
    gpus = _targets(request.gpu_names)
    found = discover(request.paths, config.root, config.exclude, config.respect_gitignore, request.force_exclude)
    errors = [f"{path}: no such file or directory" for path in found.missing]
    options = EngineOptions(
        rules=request.rules,
        gpus=gpus,
        limits=Limits(max_file_size=config.max_file_size, max_nodes=config.max_nodes),
    )
    jobs = request.jobs or default_jobs()
    results = check_sources(found.files, options, jobs)

    per_file = []
    for pattern, selectors in config.per_file_ignores.items():
        from precisionlint.checks import expand_selector

        codes = {r.code for s in selectors for r in expand_selector(s)}
        if not codes and selectors:
            raise ConfigError(f"per-file-ignores: unknown rule in {selectors} for '{pattern}'")
        per_file.append((pattern, codes))

    findings: list[Finding] = []
    internal = False
    for source, result in zip(found.files, results, strict=True):
        internal = internal or result.internal_error
        kept = result.findings
        if per_file:
            relative = _relative(source.fs_path, config.root)
            ignored = {code for pattern, codes in per_file if matches_any(relative, [pattern]) for code in codes}
            kept = [f for f in kept if f.code not in ignored or f.code == "PL009"]
        findings.extend(kept)
    findings.sort(key=Finding.sort_key)

    outcome = RunOutcome(findings, errors, internal, _rules_for_output(findings), files_checked=len(found.files))
    if request.fix or request.diff:
        from precisionlint.fix import apply_fixes

        apply_fixes(outcome, found.files, options, request)
    return outcome


def _relative(fs_path: str, root: Path) -> str:
    try:
        return Path(fs_path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(fs_path).as_posix()


def _rules_for_output(findings: list[Finding]) -> list[Rule]:
    codes = {f.code for f in findings}
    return [r for r in all_rules() if r.code in codes]
