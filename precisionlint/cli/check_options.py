"""`precisionlint check`'s options, declared once (OPTIONS), and a click-free parser of them for the common
invocation.

`check` runs on every commit, so its start-up matters: importing click alone costs about as much as starting
Python. commands.py builds the click command from this table, and `parse_fast` reads the same table to handle
a plain `check [options] paths` without importing click. Whatever the fast parser does not fully understand
(--help, an unknown option, a bad choice, an error worth a usage message) it leaves to click, so behaviour and
messages are click's in every case where they differ. tests/test_check_command.py proves both parsers agree on
every option.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

OUTPUT_FORMATS = ("text", "concise", "full", "grouped", "json", "json-lines", "github", "gitlab", "junit",
                  "sarif")
COLOR_CHOICES = ("auto", "always", "never")
SEVERITIES = ("error", "warning", "info")


class Option:
    """One option of `check`. A plain class: a NamedTuple costs every `check` a quarter of a millisecond to create."""

    __slots__ = ("flags", "dest", "kind", "help", "choices", "default", "integer_min", "file_path")

    def __init__(
        self,
        flags: tuple[str, ...],
        dest: str,
        kind: str,  # "flag" | "value" | "multiple"
        help: str,
        choices: tuple[str, ...] | None = None,
        default: Any = None,
        integer_min: int | None = None,  # an integer option with this minimum
        file_path: bool = False,  # a path that must not be a directory
    ) -> None:
        self.flags = flags
        self.dest = dest
        self.kind = kind
        self.help = help
        self.choices = choices
        self.default = default
        self.integer_min = integer_min
        self.file_path = file_path

    def __repr__(self) -> str:
        return f"Option({self.flags!r}, {self.dest!r})"


OPTIONS: tuple[Option, ...] = (
    Option(("--select",), "select", "multiple",
           "Rules to enable, instead of the configured ones: names, codes or code prefixes (comma-separated).",
           default=()),
    Option(("--extend-select",), "extend_select", "multiple",
           "Rules to enable in addition to the configured ones.", default=()),
    Option(("--ignore",), "ignore", "multiple", "Rules to disable: names, codes or code prefixes (comma-separated).",
           default=()),
    Option(("--extend-ignore",), "extend_ignore", "multiple",
           "Rules to disable in addition to the configured ones (the same as --ignore).", default=()),
    Option(("--output-format",), "output_format", "value",
           "Output format (text: full with a source frame on a terminal, concise otherwise).",
           choices=OUTPUT_FORMATS, default="text"),
    Option(("--output-file", "-o"), "output_file", "value", "Write the report to this file instead of stdout.",
           file_path=True),
    Option(("--statistics",), "statistics", "flag", "Print the number of findings per rule instead of each finding.",
           default=False),
    Option(("--fail-on",), "fail_on", "value",
           "Lowest severity that makes the run fail (default: warning, or fail-on in the config).",
           choices=SEVERITIES),
    Option(("--exit-zero",), "exit_zero", "flag", "Exit 0 even when there are findings.", default=False),
    Option(("--config",), "config_file", "multiple",
           "A pyproject.toml or precisionlint.toml for every file, instead of each file's nearest configuration; "
           "or KEY=VALUE (TOML, as in the configuration: --config 'fail-on=\"error\"'), which overrides that key "
           "of every configuration (repeatable).", default=(), file_path=True),
    Option(("--exclude",), "exclude", "multiple",
           "Globs to skip, instead of the configuration's exclude (comma-separated; the built-in skips such as "
           ".git and virtual environments always hold).", default=()),
    Option(("--extend-exclude",), "extend_exclude", "multiple",
           "Globs to skip, in addition to the configuration's exclude (comma-separated).", default=()),
    Option(("--gpu",), "gpus", "multiple",
           "Target GPU: a name, a compute capability (cc8.9, sm_89) or 'auto' for this machine's (repeatable; "
           "every target must be satisfied).", default=()),
    Option(("--fix",), "fix", "flag", "Apply safe fixes in place.", default=False),
    Option(("--exit-non-zero-on-fix",), "exit_non_zero_on_fix", "flag",
           "With --fix: exit 1 when a file was fixed, even if no finding remains.", default=False),
    Option(("--show-fixes",), "show_fixes", "flag", "With --fix: list the fixes applied, per file and rule.",
           default=False),
    Option(("--quiet", "-q"), "quiet", "flag",
           "Print the findings only: no summary, no notes, no progress bar.", default=False),
    Option(("--unsafe-fixes",), "unsafe_fixes", "flag", "With --fix or --diff: include unsafe fixes.", default=False),
    Option(("--diff",), "diff", "flag", "Print a unified diff of the fixes and write nothing.", default=False),
    Option(("--baseline",), "baseline", "value",
           "Report only the findings that are not in this file (written by --write-baseline): adopt the tool on "
           "a large project without fixing everything first.", file_path=True),
    Option(("--write-baseline",), "write_baseline", "value",
           "Record today's findings in this file (for --baseline) and exit 0.", file_path=True),
    Option(("--diff-against",), "diff_against", "value",
           "Report only the findings on lines changed since this git revision (a branch, tag or commit; "
           "uncommitted and untracked files count as changed)."),
    Option(("--add-noqa",), "add_noqa", "flag",
           "Add a '# precisionlint: ignore[...]' comment to every line with a finding (to adopt the tool on an "
           "existing project).", default=False),
    Option(("--stdin-filename",), "stdin_filename", "value",
           "With '-' as the path: the name of the text read from standard input (its format and configuration "
           "follow from it)."),
    Option(("--force-exclude",), "force_exclude", "flag", "Apply excludes to files named on the command line too.",
           default=False),
    Option(("--show-settings",), "show_settings", "flag",
           "Print the settings that apply to the (first) named file, and exit.", default=False),
    Option(("--show-files",), "show_files", "flag",
           "Print the files that would be checked (and on stderr the links skipped), and exit.", default=False),
    Option(("--jobs", "-j"), "jobs", "value", "Processes to use (default: all cores).", integer_min=1),
    Option(("--no-cache",), "no_cache", "flag", "Neither read nor write the cache of results between runs.",
           default=False),
    Option(("--color",), "color", "value",
           "Colors in text output: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR forces them), always, "
           "never.", choices=COLOR_CHOICES, default="auto"),
    Option(("--no-color",), "no_color", "flag", "No colors (the same as --color never).", default=False),
    Option(("--no-progress",), "no_progress", "flag", "Never show the progress bar.", default=False),
    Option(("--show-frameworks",), "show_frameworks", "flag",
           "Print, per config section, the framework that reads it and the evidence; check nothing.", default=False),
)
_BY_FLAG = {flag: option for option in OPTIONS for flag in option.flags}


def parse_fast(argv: Sequence[str]) -> dict[str, Any] | None:
    """The values of `check`'s options and paths, as click would give them, or None to let click parse."""
    values: dict[str, Any] = {o.dest: (list(o.default) if o.kind == "multiple" else o.default) for o in OPTIONS}
    paths: list[str] = []
    args = list(argv)
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            paths.extend(args[index:])
            break
        if not token.startswith("-") or token == "-":
            paths.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        option = _BY_FLAG.get(flag)
        if option is None:
            return None  # --help, --version, a typo, -j4: click's job
        if option.kind == "flag":
            if has_inline:
                return None
            values[option.dest] = True
            continue
        if has_inline:
            value = inline
        elif index < len(args):
            value = args[index]
            index += 1
        else:
            return None
        converted = _convert(option, value)
        if converted is None:
            return None
        if option.kind == "multiple":
            values[option.dest].append(converted)
        else:
            values[option.dest] = converted
    for option in OPTIONS:
        if option.kind == "multiple":
            values[option.dest] = tuple(values[option.dest])
    values["paths"] = tuple(paths)
    return values


def _convert(option: Option, value: str) -> Any:
    if option.choices is not None and value not in option.choices:
        return None
    if option.integer_min is not None:
        try:
            number = int(value.strip())
        except ValueError:
            return None
        return number if number >= option.integer_min else None
    if option.file_path and os.path.isdir(value):
        return None
    return value
