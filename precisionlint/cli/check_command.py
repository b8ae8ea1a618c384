"""`precisionlint check`'s body: from the options' values (check_options.py parses them, or click) to the run,
its report and the exit code; --show-settings, --show-files, --add-noqa, --baseline and --diff-against. The
rules and GPUs of each configuration come from rule_selection.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from precisionlint.cli.check_options import OPTIONS
from precisionlint.cli.rule_selection import comma_separated, gpus_for, rules_for
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.run.config import UsageError

if TYPE_CHECKING:
    from typing import Any

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def error(message: str) -> None:
    from precisionlint.core.streams import write_error

    write_error(f"precisionlint: error: {message}\n")


def _warning(message: str) -> None:
    from precisionlint.core.streams import write_error

    write_error(f"precisionlint: warning: {message}\n")


OUT_OF_MEMORY = ("precisionlint: error: out of memory: this run needs more memory than the process may use (a "
                 "memory limit such as `ulimit -v`?); check fewer files at a time or allow more memory\n")


_SAID_OUT_OF_MEMORY: list[bool] = []  # one entry once the run has said it ran out of memory


def out_of_memory() -> None:
    """Say that the run ran out of memory: one line. The process then ends without the interpreter's teardown
    (cli.entry), which under the same limit can print a `MemoryError` line for each object it fails to free."""
    from precisionlint.core.streams import write_error

    write_error(OUT_OF_MEMORY)
    _SAID_OUT_OF_MEMORY.append(True)


def said_out_of_memory() -> bool:
    return bool(_SAID_OUT_OF_MEMORY)


def internal_error(exc: BaseException) -> None:
    """A bug: one clear line (the traceback on request) instead of a traceback."""
    if os.environ.get("PRECISIONLINT_DEBUG"):
        import traceback

        traceback.print_exc()
    from precisionlint.core.memory import ran_out_of_memory
    from precisionlint.core.streams import write_error

    if ran_out_of_memory(exc):  # a memory limit (ulimit -v, a container's), not a bug
        out_of_memory()
        return
    detail = " ".join(str(exc).split())[:300]
    write_error(
        f"precisionlint: internal error: {type(exc).__name__}: {detail}. This is a bug in precisionlint; "
        "please report it (PRECISIONLINT_DEBUG=1 prints the traceback).\n"
    )


def use_color(values: dict[str, Any], stream: Any) -> bool:
    """--color, then NO_COLOR / FORCE_COLOR (https://no-color.org, https://force-color.org), then a terminal."""
    choice = "never" if values.get("no_color") else (values.get("color") or "auto")
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def interrupted(exc: BaseException) -> int:
    """SIGINT or SIGTERM stopped the run: say so in one line; the exit code a shell gives a process killed by
    that signal (130, 143), not 1, which would read as "findings". Files already fixed are complete; no file
    is half-written (precisionlint.core.interrupts)."""
    from precisionlint.core.interrupts import EXIT_SIGINT, EXIT_SIGTERM, exit_code_for, stop_all

    stop_all()  # no worker outlives the run
    try:
        error("interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated")
    except (OSError, ValueError):
        pass  # stderr closed: the exit code still says it
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_SIGINT
    return exit_code_for(exc.signum) if hasattr(exc, "signum") else EXIT_SIGTERM


def execute(values: dict[str, Any]) -> int:
    """Run `check` with parsed option values; the exit code. Raises UsageError before any output."""
    from precisionlint.core import interrupts
    from precisionlint.run.config import ConfigError, load_config
    from precisionlint.run.runner import FileSettings, RunRequest, StdinSource, run_check

    interrupts.install()  # Ctrl-C and SIGTERM: a prompt stop, exit 130 / 143 (see interrupted())
    from precisionlint.core.streams import prepare

    closed = prepare()  # a closed stdout, or one that cannot spell a file name (see precisionlint.core.streams)
    if closed is not None:
        error(closed)
        return EXIT_ERROR
    values = {**{o.dest: (tuple(o.default) if o.kind == "multiple" else o.default) for o in OPTIONS}, **values}
    paths = list(values["paths"])
    stdin: StdinSource | None = None
    if "-" in paths or (values["stdin_filename"] and not paths):
        if paths not in ([], ["-"]):
            raise UsageError("'-' (standard input) cannot be combined with other paths")
        name = values["stdin_filename"]
        if not name:
            raise UsageError("checking standard input ('-') needs --stdin-filename NAME (its format follows from "
                             "the name, as train.yaml or train.py)")
        from precisionlint.sources import format_of

        if format_of(name) is None:
            raise UsageError(f"--stdin-filename: {name!r} is not a TOML, YAML, JSON or Python file name")
        if values["add_noqa"]:
            raise UsageError("--add-noqa edits files in place; it cannot be used with standard input")
        stdin = StdinSource(sys.stdin.buffer.read(), name)
    elif values["stdin_filename"]:
        raise UsageError("--stdin-filename names the text read from standard input: give '-' as the only path")
    if values["add_noqa"] and (values["fix"] or values["diff"]):
        raise UsageError("--add-noqa cannot be combined with --fix or --diff")
    if values["exit_zero"] and values["exit_non_zero_on_fix"]:
        raise UsageError("--exit-zero and --exit-non-zero-on-fix contradict each other: give one")

    explicit, adjust = _command_line_settings(values)
    try:
        start = Path(stdin.display).parent if stdin is not None else None
        config = load_config(explicit, start)
    except ConfigError as exc:
        error(str(exc))
        return EXIT_ERROR
    adjust(config)
    if values.get("show_frameworks"):
        from precisionlint.output.frameworks_report import show

        return show(paths, config.root, config.exclude, config.respect_gitignore, sys.stdout)

    cache: dict[int, FileSettings] = {}

    def settings_for(file_config: Any) -> FileSettings:
        key = id(file_config)
        if key not in cache:
            adjust(file_config)
            from precisionlint.core.model import Severity

            fail_on = Severity.parse(values["fail_on"]) if values["fail_on"] else file_config.fail_on
            cache[key] = FileSettings(file_config, rules_for(file_config, values), gpus_for(file_config, values),
                                      fail_on)
        return cache[key]

    request = RunRequest(
        paths=paths or ["."],
        config=config,
        rules=[],
        fix=values["fix"],
        unsafe_fixes=values["unsafe_fixes"],
        diff=values["diff"],
        force_exclude=values["force_exclude"],
        jobs=values["jobs"],
        progress=not values["no_progress"] and not values["quiet"],
        cache=not values["no_cache"] and stdin is None,
        settings_for=settings_for,
        stdin=stdin,
        explicit_config=explicit is not None,
        adjust_config=adjust,
        digests=bool(values["add_noqa"]),
    )
    try:
        if values["show_settings"]:
            return _show_settings(request, values)
        if values["show_files"]:
            return _show_files(request)
        settings_for(config)  # the settings of the run's own configuration are checked before any work
        outcome = run_check(request)
    except ConfigError as exc:
        error(str(exc))
        return EXIT_ERROR
    except (KeyboardInterrupt, interrupts.Terminated) as exc:
        return interrupted(exc)
    for message in outcome.errors:
        error(message)
    for message in outcome.warnings:
        _warning(message)
    narrowed = _narrow(values, outcome, stdin)
    if narrowed is not None:
        return narrowed
    if values["add_noqa"]:
        from precisionlint.fix.noqa import add_noqa

        added, problems = add_noqa(outcome.findings, outcome.groups, outcome.digests)
        for message in problems:
            error(message)
        sys.stdout.write(f"Added {added} suppression comment{'s' if added != 1 else ''}.\n")
        return EXIT_ERROR if problems or outcome.errors or outcome.internal_error else EXIT_CLEAN
    try:
        code = _report(values, outcome, stdin)
    except BrokenPipeError:
        raise  # the reader went away (`| head`): nothing to say to anyone
    except OSError as exc:  # a full disk, /dev/full, a closed descriptor
        import errno

        from precisionlint.core.streams import describe, discard_stdout

        discard_stdout()
        if exc.errno == errno.ENOMEM:  # a memory limit met while writing: said as wherever else it is met
            out_of_memory()
        else:
            error(f"cannot write the report to standard output: {describe(exc)}")
        return EXIT_ERROR
    if code is not None:
        return code

    if outcome.errors or outcome.internal_error:
        return EXIT_ERROR
    if values["exit_zero"]:
        return EXIT_CLEAN
    if values["exit_non_zero_on_fix"] and values["fix"] and not values["diff"] and outcome.fixed:
        return EXIT_FINDINGS  # as ruff's: a commit hook that changed files must stop the commit
    if outcome.diff_text is not None:
        return EXIT_FINDINGS if outcome.diff_text else EXIT_CLEAN
    if outcome.failing is not None:
        return EXIT_FINDINGS if outcome.failing else EXIT_CLEAN
    return EXIT_FINDINGS if outcome.findings else EXIT_CLEAN


def _report(values: dict[str, Any], outcome: Any, stdin: Any) -> int | None:
    """Print the report (or the diff, or the fixed standard input); an exit code when writing failed."""
    from precisionlint.output import render

    output_file = values["output_file"]
    stream: Any = sys.stdout
    if output_file:
        try:
            stream = open(output_file, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 (closed below)
        except OSError as exc:
            error(f"{output_file}: cannot write the report: {exc.strerror or exc}")
            return EXIT_ERROR
    try:
        if stdin is not None and outcome.fixed_text is not None:
            # As ruff: `check - --fix` prints the fixed text; the findings that remain go to stderr.
            sys.stdout.write(outcome.fixed_text)
            stream = sys.stderr if not output_file else stream
        if outcome.diff_text is not None:
            stream.write(outcome.diff_text)
            if not values["quiet"]:
                _diff_note(values, outcome)
        else:
            output_format = values["output_format"]
            color = output_format in ("text", "concise", "full") and use_color(values, stream)
            if output_format == "text":
                output_format = "full" if _is_terminal(stream) else "concise"
            sources = {stdin.display: stdin.data.decode("utf-8", "replace")} if stdin is not None else None
            render(output_format, outcome.findings, stream, rules=outcome.rules_for_output, color=color,
                   fixed=outcome.fixed, files=outcome.files_checked, errors=len(outcome.errors),
                   statistics=values["statistics"], sources=sources, unread=outcome.unread,
                   unsafe_fixes=values["unsafe_fixes"], summary=not values["quiet"],
                   show_fixes=values["show_fixes"], fixes_applied=outcome.fixes_applied, notes=outcome.notes)
        stream.flush()
    finally:
        if output_file:
            stream.close()
    return None


def _narrow(values: dict[str, Any], outcome: Any, stdin: Any) -> int | None:
    """--write-baseline (records the findings: exit code, or None), --baseline and --diff-against (keep only
    the findings they let through, and what fails the run is counted again from those)."""
    if not (values["baseline"] or values["write_baseline"] or values["diff_against"]):
        return None
    from precisionlint.run.baseline import BaselineError, new_findings, write
    from precisionlint.run.changed_lines import ChangedLinesError, changed_lines, on_changed_lines

    sources = {stdin.display: stdin.data.decode("utf-8", "replace")} if stdin is not None else None
    try:
        if values["write_baseline"]:
            count = write(values["write_baseline"], outcome.findings, sources)
            if not values["quiet"]:
                sys.stdout.write(f"Recorded {count} finding{'' if count == 1 else 's'} in "
                                 f"{values['write_baseline']}; `check --baseline {values['write_baseline']}` "
                                 "reports only the others.\n")
            return EXIT_ERROR if outcome.errors or outcome.internal_error else EXIT_CLEAN
        kept = list(outcome.findings)
        if values["baseline"]:
            kept = new_findings(values["baseline"], kept, sources)
        if values["diff_against"]:
            kept = on_changed_lines(kept, changed_lines(values["diff_against"]))
    except (BaselineError, ChangedLinesError) as exc:
        error(str(exc))
        return EXIT_ERROR
    hidden = len(outcome.findings) - len(kept)
    fail_on = {source.display: settings.fail_on for settings, files in outcome.groups for source in files}
    from precisionlint.core.model import Severity

    outcome.findings = kept
    outcome.failing = sum(1 for f in kept if f.severity >= fail_on.get(f.path, Severity.WARNING))
    outcome.notes = [_hidden_note(values, hidden)] if hidden else []
    return None


def _hidden_note(values: dict[str, Any], hidden: int) -> str:
    why = []
    if values["baseline"]:
        why.append(f"in the baseline {values['baseline']}")
    if values["diff_against"]:
        why.append(f"on lines unchanged since {values['diff_against']}")
    return f"{hidden} more finding{'' if hidden == 1 else 's'} not shown: {' or '.join(why)}."


def _command_line_settings(values: dict[str, Any]) -> tuple[str | None, Any]:
    """--config FILE, and what the command line sets over every configuration (--config KEY=VALUE, --exclude,
    --extend-exclude): the file, or None, and a function that applies the rest to a configuration once."""
    files: list[str] = []
    table: dict[str, Any] = {}
    for value in values.get("config_file") or ():
        if "=" not in value or os.path.isfile(value):
            files.append(value)
            continue
        table.update(_override(value))
    if len(files) > 1:
        raise UsageError(f"--config: one configuration file at most (got {', '.join(files)}); settings of their "
                         "own are given as KEY=VALUE")
    replace = comma_separated(values.get("exclude", ()))
    extend = comma_separated(values.get("extend_exclude", ()))
    overrides = None
    if table:
        from precisionlint.run.config import ConfigError, parse_table

        try:
            overrides = parse_table(table, None)
        except ConfigError as exc:
            raise UsageError(f"--config: {exc}") from None
    done: set[int] = set()

    def adjust(config: Any) -> None:
        if id(config) in done:
            return
        done.add(id(config))
        if overrides is not None:
            from precisionlint.run.config import _KEYS

            for key in overrides.set_keys:
                if key in ("exclude", "extend-exclude"):
                    continue
                attribute = _KEYS[key][0]
                setattr(config, attribute, getattr(overrides, attribute))
                config.set_keys.append(f"{key} (--config)")
            if "exclude" in overrides.set_keys:
                config.exclude = list(overrides.exclude)
            elif "extend-exclude" in overrides.set_keys:
                config.exclude = [*config.exclude, *overrides.extend_exclude]
        if replace:
            config.exclude = list(replace)
        config.exclude = [*config.exclude, *extend]

    return (files[0] if files else None), adjust


def _override(value: str) -> dict[str, Any]:
    """One --config KEY=VALUE, read as a line of TOML (as ruff reads its --config overrides)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomlkit

        def parse(text: str) -> dict[str, Any]:
            return tomlkit.parse(text).unwrap()
    else:
        parse = tomllib.loads
    try:
        table = parse(value)
    except Exception as exc:  # tomllib.TOMLDecodeError, tomlkit's ParseError
        raise UsageError(f"--config: {value!r} is neither a configuration file nor KEY=VALUE in TOML ({exc}); "
                         "a string value needs quotes: --config 'fail-on=\"error\"'") from None
    if len(table) != 1:
        raise UsageError(f"--config: {value!r}: give one KEY=VALUE per --config")
    return table


def _diff_note(values: dict[str, Any], outcome: Any) -> None:
    """Under --diff, on stderr as ruff does: how many findings the diff fixes, and the unsafe fixes it leaves out
    (without this, a diff of nothing and exit 0 read as "nothing to fix")."""
    from precisionlint.output.text import has_unsafe_fix, hidden_fixes_note

    hidden = 0 if values["unsafe_fixes"] else sum(1 for f in outcome.findings if has_unsafe_fix(f))
    if not outcome.fixed and not hidden:
        return
    count = outcome.fixed
    head = f"Would fix {count} finding{'' if count == 1 else 's'}" if count else "No safe fixes"
    sys.stderr.write(head + (f" ({hidden_fixes_note(hidden)})" if hidden else "") + ".\n")


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _show_files(request: Any) -> int:
    from precisionlint.core.streams import write_error
    from precisionlint.run.runner import plan

    skipped: list[tuple[str, str]] = []
    groups, errors = plan(request, skipped)
    for message in errors:
        error(message)
    for path, why in skipped:  # not errors: a walked tree may hold links that lead nowhere (see discover.py)
        write_error(f"precisionlint: note: skipped {path}: {why}\n")
    for path in sorted(source.display for _settings, files in groups for source in files):
        sys.stdout.write(path + "\n")
    return EXIT_ERROR if errors else EXIT_CLEAN


def _show_settings(request: Any, values: dict[str, Any]) -> int:
    """The settings that apply to one file, as ruff's --show-settings."""
    from precisionlint.run.config import ConfigFinder

    target = request.stdin.display if request.stdin is not None else (request.paths[0] if request.paths else ".")
    config = request.config
    if not request.explicit_config:
        found = ConfigFinder().for_file(target) if not os.path.isdir(target) else \
            ConfigFinder().for_directory(Path(target))
        config = found or config
    settings = request.settings_for(config)
    lines = [
        f"File: {target}",
        f"Configuration: {config.label}",
        f"Root (patterns are relative to it): {config.root}",
        f"Keys set by the configuration: {', '.join(config.set_keys) or '(none)'}",
        f"Rules ({len(settings.rules)}): " + ", ".join(f"{r.code} {r.name}" for r in settings.rules),
        f"Fail on: {settings.fail_on.label}",
        "GPUs: " + (", ".join(g.describe() for g in settings.gpus) or "(none: the rules that need a GPU are off)"),
        f"Exclude: {config.exclude or '[]'}",
        f"Per-file ignores: {config.per_file_ignores or '{}'}",
        f"Respect .gitignore: {str(config.respect_gitignore).lower()}",
        f"Limits: max-file-size={config.max_file_size} bytes, max-nodes={config.max_nodes}, "
        f"max-depth={config.max_depth}, max-parse-time={config.max_parse_time:g} s, "
        f"max-memory={config.max_memory} bytes",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_CLEAN
