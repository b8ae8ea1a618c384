"""One read of a config by a reader that is certain (a script's load handed to a framework call, a launch line),
and the folders whose files are never a project's readers: shared by project/config_readers.py and the readers
of launch lines (project/launch_configs.py, project/lightning_cli.py). And one launch line that starts a script
(project/launched.py), as the project model keeps them."""

from __future__ import annotations

import os

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import NamedTuple

    from precisionlint.sources.shell_source import Launch  # not imported by a check that reads no launch line
else:
    from precisionlint.core.light_typing import NamedTuple


class Read(NamedTuple):
    """One section of a config handed to a framework call by a script, or read by a launch line's program."""

    config: str  # the real path of the config file
    section: tuple[str, ...]  # the keys leading to the section read, outermost first (() the whole file)
    keys: tuple[tuple[str, str], ...] | None  # (config key, canonical setting) read one by one; None: all of it
    framework: str  # "lightning", "hf", ...
    target: str  # the call, as the script's imports name it: "lightning.Trainer"
    script: str  # the script's path as findings show paths
    line: int  # the line of the framework call
    # Keys of the section the script writes before the call (or the launch line gives as flags); for
    # TrainingArguments, also every attribute the script assigns (`args.bf16 = ...` after parsing)
    overridden: frozenset[str] = frozenset()

    def evidence(self) -> str:
        return f"read by {self.script}:{self.line} into {self.target}"


class LaunchLine(NamedTuple):
    """One launch line of a project's shell script that starts a script (project/launched.py)."""

    path: str  # the shell script, as findings show paths
    launch: Launch


SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", "site-packages", ".tox",
                             ".nox", ".eggs", ".mypy_cache", ".ruff_cache", ".pytest_cache", "tests", "test",
                             "docs"})


def project_files(root: str, suffixes: tuple[str, ...], max_files: int, skipped: frozenset[str] = SKIPPED_FOLDERS,
                  max_folders: int | None = None) -> list[str]:
    """The files under a project's root whose names end in `suffixes`, in a stable order: not in hidden or
    `skipped` folders, nor in a virtual environment below the root; at most `max_files` of them and, where given,
    `max_folders` folders listed (a tree of other files, a data set, is not walked to its end)."""
    found: list[str] = []
    pending = [root]
    visited = 0
    while pending and len(found) < max_files and (max_folders is None or visited < max_folders):
        folder = pending.pop()
        visited += 1
        try:
            with os.scandir(folder) as entries:
                listing = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            continue
        if folder != root and any(entry.name in ("pyvenv.cfg", "conda-meta") for entry in listing):
            continue
        for entry in listing:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in skipped and not entry.name.startswith("."):
                        pending.append(entry.path)
                elif entry.name.endswith(suffixes) and entry.is_file():
                    found.append(entry.path)
            except OSError:
                continue
    return found
