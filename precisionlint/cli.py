"""The command line: parses options, calls the engine, picks a renderer. No analysis here.

Exit codes (as ruff): 0 nothing at or above the --fail-on threshold, 1 findings, 2 usage, configuration or
internal error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from precisionlint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ("text", "json", "github", "sarif")


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _fail(message: str) -> None:
    click.echo(f"precisionlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


# Commands imported only when named (or listed by --help): `check` must not pay for what `advise` imports.
_LAZY_COMMANDS = {"advise": ("precisionlint.advise_command", "advise")}


class _Group(click.Group):
    def main(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        # click exits with 2 on usage errors already; anything unexpected must not print a traceback.
        try:
            return super().main(*args, **kwargs)
        except (KeyboardInterrupt, BrokenPipeError):
            sys.exit(EXIT_ERROR)
        except Exception as exc:  # a bug: one clear line (the traceback on request), exit code 2
            if os.environ.get("PRECISIONLINT_DEBUG"):
                import traceback

                traceback.print_exc()
            detail = " ".join(str(exc).split())[:300]
            click.echo(
                f"precisionlint: internal error: {type(exc).__name__}: {detail}. This is a bug in precisionlint; "
                "please report it (PRECISIONLINT_DEBUG=1 prints the traceback).",
                err=True,
            )
            sys.exit(EXIT_ERROR)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in _LAZY_COMMANDS:
            import importlib

            module, attribute = _LAZY_COMMANDS[name]
            try:
                command = getattr(importlib.import_module(module), attribute)
            except ImportError:  # pragma: no cover - the module ships with the package
                return None
            self.add_command(command, name)
        return command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="precisionlint")
def main() -> None:
    """Catch mixed-precision mistakes in PyTorch training configs and scripts before the run starts."""


def _resolve_rules(select: list[str], ignore: list[str]):  # type: ignore[no-untyped-def]
    from precisionlint.checks import all_rules, expand_selector

    def expand(selectors: list[str], option: str) -> set[str]:
        codes: set[str] = set()
        for selector in selectors:
            found = expand_selector(selector)
            if not found:
                import difflib

                names = [r.name for r in all_rules()] + [r.code for r in all_rules()]
                close = difflib.get_close_matches(selector, names, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else "; see `precisionlint rules`"
                raise click.UsageError(f"{option}: unknown rule or code '{selector}'{hint}")
            codes.update(r.code for r in found)
        return codes

    selected = expand(select or ["ALL"], "--select")
    selected -= expand(ignore, "--ignore")
    return [r for r in all_rules() if r.code in selected]


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, help="Rules to enable: names, codes or code prefixes (comma-separated).")
@click.option("--ignore", multiple=True, help="Rules to disable: names, codes or code prefixes (comma-separated).")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Lowest severity that makes the run fail (default: warning, or fail-on in the config).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="A pyproject.toml or precisionlint.toml to use instead of the nearest pyproject.toml.")
@click.option("--gpu", "gpus", multiple=True,
              help="Target GPU (repeatable; every target must be satisfied), or 'auto' to ask this machine.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff: include unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print a unified diff of the fixes and write nothing.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Processes to use (default: all cores).")
@click.option("--no-color", is_flag=True, help="No colors (also when NO_COLOR is set).")
@click.option("--no-progress", is_flag=True, help="Never show the progress bar.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    fail_on: str | None,
    exit_zero: bool,
    config_file: str | None,
    gpus: tuple[str, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    force_exclude: bool,
    jobs: int | None,
    no_color: bool,
    no_progress: bool,
) -> None:
    """Check trainer configs (TOML, YAML, JSON) and training scripts (Python) for precision mistakes."""
    from precisionlint.config import ConfigError, load_config
    from precisionlint.runner import RunRequest, run_check

    try:
        config = load_config(config_file)
    except ConfigError as exc:
        _fail(str(exc))
        return
    rules = _resolve_rules(_split(select) or config.select, _split(ignore) + config.ignore)
    request = RunRequest(
        paths=list(paths) or ["."],
        config=config,
        rules=rules,
        gpu_names=_split(gpus) or config.gpus,
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        force_exclude=force_exclude,
        jobs=jobs,
        progress=not no_progress,
    )
    try:
        outcome = run_check(request)
    except click.UsageError:
        raise
    except ConfigError as exc:
        _fail(str(exc))
        return
    except KeyboardInterrupt:  # click would print "Aborted!" and exit 1, which reads as "findings"
        _fail("interrupted")
        return
    for message in outcome.errors:
        click.echo(f"precisionlint: error: {message}", err=True)

    from precisionlint.output import render

    color = output_format == "text" and not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()
    if outcome.diff_text is not None:
        sys.stdout.write(outcome.diff_text)
    else:
        render(output_format, outcome.findings, sys.stdout, rules=outcome.rules_for_output, color=color,
               fixed=outcome.fixed)
    sys.stdout.flush()

    if outcome.errors or outcome.internal_error:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_CLEAN)
    from precisionlint.model import Severity

    threshold = Severity.parse(fail_on) if fail_on else config.fail_on
    if outcome.diff_text is not None:
        sys.exit(EXIT_FINDINGS if outcome.diff_text else EXIT_CLEAN)
    failing = any(f.severity >= threshold for f in outcome.findings)
    sys.exit(EXIT_FINDINGS if failing else EXIT_CLEAN)


@main.command()
@click.argument("name")
def rule(name: str) -> None:
    """Print the documentation of a rule, by name or code."""
    from precisionlint.checks import all_rules, find_rule

    found = find_rule(name)
    if found is None:
        import difflib

        names = [r.name for r in all_rules()]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else " See `precisionlint rules`."
        raise click.UsageError(f"unknown rule '{name}'.{hint}")
    fixable = " (fixable)" if found.fixable else ""
    click.echo(f"# {found.name} ({found.code})\n")
    click.echo(f"Default severity: {found.severity.label}{fixable}. {found.summary}\n")
    click.echo(found.doc)


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule (markdown: the README's rule table)."""
    from precisionlint.checks import all_rules

    rules = all_rules()
    if output_format == "markdown":
        click.echo(rules_markdown(rules), nl=False)
        return
    if output_format == "json":
        import json

        payload = [
            {"code": r.code, "name": r.name, "severity": r.severity.label, "summary": r.summary,
             "fixable": r.fixable, "needs_gpu": r.needs_gpu}
            for r in rules
        ]
        click.echo(json.dumps(payload, indent=2))
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        click.echo(f"{r.code}  {r.name.ljust(width)}  {r.severity.label:<7}  {r.summary}")


def rules_markdown(rules) -> str:  # type: ignore[no-untyped-def]
    """The rule table of README.md, generated from the registry (tests/test_readme.py keeps them equal)."""
    lines = ["| Code | Name | Severity | Fix | Summary |", "|---|---|---|---|---|"]
    for r in rules:
        fix = "yes" if r.fixable else ""
        gpu = " (needs a target GPU)" if r.needs_gpu else ""
        lines.append(f"| {r.code} | `{r.name}` | {r.severity.label} | {fix} | {r.summary}{gpu} |")
    return "\n".join(lines) + "\n"

