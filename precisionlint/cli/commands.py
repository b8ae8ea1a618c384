"""The command line: parses options, calls the engine, picks a renderer. No analysis here.

Exit codes (as ruff): 0 nothing at or above the --fail-on threshold, 1 findings, 2 usage, configuration or
internal error.
"""

from __future__ import annotations

import sys

import click

from precisionlint import __version__
from precisionlint.core.interrupts import Terminated

EXIT_ERROR = 2


# Commands imported only when named (or listed by --help): `check` must not pay for what `advise` imports.
_LAZY_COMMANDS = {
    "advise": ("precisionlint.cli.advise_command", "advise"),
    "server": ("precisionlint.server.command", "server"),
}


class _Group(click.Group):
    def main(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        # click exits with 2 on usage errors already; anything unexpected must not print a traceback.
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:
            sys.exit(EXIT_ERROR)
        except (KeyboardInterrupt, Terminated) as exc:
            from precisionlint.cli.check_command import interrupted

            sys.exit(interrupted(exc))
        except Exception as exc:  # a bug: one clear line (the traceback on request), exit code 2
            from precisionlint.cli.check_command import internal_error

            internal_error(exc)
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


def _check_options(func):  # type: ignore[no-untyped-def]
    """The click options of `check`, from the one table that the fast path reads too (check_options.OPTIONS)."""
    from precisionlint.cli.check_options import OPTIONS

    for option in reversed(OPTIONS):
        kwargs: dict = {"help": option.help}
        if option.kind == "flag":
            kwargs.update(is_flag=True, default=False)
        elif option.kind == "multiple":
            kwargs.update(multiple=True)
            if option.file_path:
                kwargs["type"] = click.Path(dir_okay=False)
        else:
            kwargs["default"] = option.default
            if option.choices is not None:
                kwargs.update(type=click.Choice(option.choices), show_default=option.default is not None)
            elif option.integer_min is not None:
                kwargs["type"] = click.IntRange(min=option.integer_min)
            elif option.file_path:
                kwargs["type"] = click.Path(dir_okay=False)
        func = click.option(*option.flags, option.dest, **kwargs)(func)
    return click.argument("paths", nargs=-1, type=click.Path())(func)


@main.command()
@_check_options
def check(**values: object) -> None:
    """Check trainer configs (TOML, YAML, JSON) and training scripts (Python) for precision mistakes."""
    from precisionlint.cli.check_command import execute
    from precisionlint.run.config import UsageError

    try:
        code = execute(values)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
    except (KeyboardInterrupt, Terminated) as exc:  # click would say "Aborted!" and exit 1 ("findings")
        from precisionlint.cli.check_command import interrupted

        code = interrupted(exc)
    sys.exit(code)


def lookup_rules(name: str) -> list:  # type: ignore[type-arg]
    """The rules a `rule NAME` query means: an exact name or code; a code prefix (`PL1`: the group); else names
    that start with the query, then names that contain it. Empty when nothing matches."""
    from precisionlint.checks import all_rules, find_rule

    key = name.strip().lower()
    if not key:
        return []
    exact = find_rule(key)
    if exact is not None:
        return [exact]
    rules = all_rules()
    for matches in (
        [r for r in rules if len(key) >= 2 and r.code.lower().startswith(key)],
        [r for r in rules if r.name.startswith(key)],
        [r for r in rules if len(key) >= 3 and key in r.name],
    ):
        if matches:
            return matches
    return []


@main.command()
@click.argument("name", required=False)
@click.option("--all", "every", is_flag=True, help="Print the documentation of every rule.")
def rule(name: str | None, every: bool) -> None:
    """Print the documentation of a rule: by name, code, name prefix or substring; a code prefix lists the group."""
    from precisionlint.checks import all_rules

    if every == (name is not None):
        raise click.UsageError("give a rule (name, code or prefix) or --all")
    if every:
        for number, one in enumerate(all_rules()):
            if number:
                click.echo("\n" + "-" * 80 + "\n")
            _print_rule(one)
        return
    assert name is not None
    found = lookup_rules(name)
    if not found:
        import difflib

        key = name.strip().lower()
        # Against whole names, then against each name's start as long as the query (a mistyped prefix).
        by_start = {r.name[: len(key) + 1]: r.name for r in all_rules()}
        close = difflib.get_close_matches(key, [r.name for r in all_rules()], n=3)
        close = close or [by_start[m] for m in difflib.get_close_matches(key, list(by_start), n=3)]
        hint = f" Did you mean {', '.join(close)}?" if close else " See `precisionlint rules`."
        raise click.UsageError(f"unknown rule '{name}'.{hint}")
    if len(found) > 1:
        click.echo(f"{len(found)} rules match '{name}' (`precisionlint rule NAME` prints one):\n")
        width = max(len(r.name) for r in found)
        for r in found:
            click.echo(f"{r.code}  {r.name.ljust(width)}  {r.severity.label:<7}  {r.summary}")
        return
    (one,) = found
    _print_rule(one)


def _print_rule(one) -> None:  # type: ignore[no-untyped-def]
    from precisionlint.cli.rule_selection import OPT_IN_RULES

    fixable = " (fixable)" if one.fixable else ""
    opt_in = " Off unless selected (by name, code or ALL)." if one.name in OPT_IN_RULES else ""
    click.echo(f"# {one.name} ({one.code})\n")
    click.echo(f"Default severity: {one.severity.label}{fixable}.{opt_in} {one.summary}\n")
    covered = frameworks_of(one)
    if covered:
        click.echo(f"Applies to: {covered}\n")
    click.echo(one.doc)


def reads_of(rule) -> list[str]:  # type: ignore[no-untyped-def]
    """What a rule reads, from its READS metadata, in words: the frameworks' names (their SHORT or TITLE) and
    the kinds of READ_KINDS (PyTorch code, launch scripts, version pins, ...), in the order the rule lists them."""
    from precisionlint.checks import READ_KINDS
    from precisionlint.frameworks.registry import framework

    words = []
    for name in rule.reads:
        module = framework(name)
        if module is not None:
            words.append(getattr(module, "SHORT", module.TITLE))
        else:
            words.append(READ_KINDS.get(name, name))
    return words


def frameworks_of(rule) -> str:  # type: ignore[no-untyped-def]
    """`reads_of` as one line ("Lightning, version pins")."""
    return ", ".join(reads_of(rule))


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule, with the frameworks it covers (markdown: the README's rule table)."""
    from precisionlint.checks import all_rules
    from precisionlint.cli.rule_selection import OPT_IN_RULES

    rules = all_rules()
    if output_format == "markdown":
        click.echo(rules_markdown(rules), nl=False)
        return
    if output_format == "json":
        import json

        payload = [
            {"code": r.code, "name": r.name, "severity": r.severity.label, "summary": r.summary,
             "fixable": r.fixable, "needs_gpu": r.needs_gpu, "default": r.name not in OPT_IN_RULES,
             "applies_to": frameworks_of(r) or None, "reads": list(r.reads)}
            for r in rules
        ]
        click.echo(json.dumps(payload, indent=2))
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        covered = frameworks_of(r)
        note = f" (reads: {covered})" if covered else ""
        off = " (off by default)" if r.name in OPT_IN_RULES and "off by default" not in r.summary else ""
        click.echo(f"{r.code}  {r.name.ljust(width)}  {r.severity.label:<7}  {r.summary}{off}{note}")


def rules_markdown(rules) -> str:  # type: ignore[no-untyped-def]
    """The rule table of README.md, generated from the registry (tests/test_readme.py keeps them equal)."""
    lines = ["| Code | Name | Severity | Fix | Summary | Reads |", "|---|---|---|---|---|---|"]
    for r in rules:
        fix = "yes" if r.fixable else ""
        gpu = " (needs a target GPU)" if r.needs_gpu else ""
        lines.append(f"| {r.code} | `{r.name}` | {r.severity.label} | {fix} | {r.summary}{gpu} | {frameworks_of(r)} |")
    return "\n".join(lines) + "\n"

