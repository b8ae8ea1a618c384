"""How a script is launched: the launch lines of the project's shell scripts that start it, with their options.

`python train.py --precision bf16`, `torchrun --nproc_per_node 8 train.py --mixed_precision bf16`, `accelerate
launch train.py --dtype bfloat16`, `deepspeed train.py ...` in a `*.sh` file of the project start train.py with
those options. The value layer (values.declared) reads them against the options the script declares: a default
that every launch line overrides is not the value the script runs with, and the values the launch lines pass
are.

The launch lines are read with the shell loader (sources/shell_source.py, never executed). A script path is
resolved from the shell script's folder, then from the project root (where launch scripts are usually run); one
with a shell variable (`$SCRIPT`) starts no script we can name. A module (`python -m pkg.train`, `torchrun -m`,
`accelerate launch -m`, `deepspeed --module`) is the file `pkg/train.py` (or `pkg/train/__main__.py`) found the same
way, or under the root's `src/`. The shell scripts read are those under the
project's root where a project file or `.git` marks it, else those under the script's own folder (at most 2,000
scripts in 5,000 folders). Only they are read:
a README's command line, a notebook cell or a job file of another format may launch the script too, so a reader
must treat "every launch line" as "every launch line of the project's shell scripts".
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from precisionlint.project.reads import LaunchLine

if TYPE_CHECKING:
    from precisionlint.project import Project

_SHELL_SUFFIXES = (".sh", ".bash")
_MAX_SHELL_FILES = 2000
_MAX_SHELL_BYTES = 1_000_000
_MAX_FOLDERS = 5000  # folders listed per project: a tree of other files (a data set) is not walked to its end
_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", "site-packages", ".tox",
                              ".nox", ".eggs", ".mypy_cache", ".ruff_cache", ".pytest_cache", "tests", "test"})


def launch_lines(project: Project, script_path: str) -> list[LaunchLine]:
    """The launch lines of the project's shell scripts that start the script at `script_path` (on disk)."""
    root = _walk_root(project, script_path)
    index = project.model.launch_lines.get(root)  # one per root, kept by the project model
    if index is None:
        index = project.model.launch_lines[root] = _index(root)
    return index.get(os.path.realpath(script_path), [])


def _walk_root(project: Project, script_path: str) -> str:
    """The folder whose shell scripts are read: the project's root where a project file or `.git` marks it; else
    (a folder of scripts with no such mark, whose "project" reaches up to the file system's root) the script's
    own folder."""
    chain = project.chain
    if chain and chain[-1].boundary:
        return os.path.abspath(project.root)
    return os.path.dirname(os.path.abspath(script_path))


def _index(root: str) -> dict[str, list[LaunchLine]]:
    from precisionlint.project import display_path
    from precisionlint.project.pins import read_text
    from precisionlint.project.reads import project_files
    from precisionlint.sources import Limits
    from precisionlint.sources.shell_source import load

    found: dict[str, list[LaunchLine]] = {}
    for path in project_files(root, _SHELL_SUFFIXES, _MAX_SHELL_FILES, _SKIPPED_FOLDERS, _MAX_FOLDERS):
        try:
            if os.path.getsize(path) > _MAX_SHELL_BYTES:
                continue
        except OSError:
            continue
        text = read_text(path)
        if text is None or (".py" not in text and _MODULE_SWITCH.search(text) is None):
            continue
        try:
            document = load(path, text, Limits())
        except (ValueError, RecursionError, MemoryError):
            continue
        shown = display_path(path)
        for launch in document.tree or []:
            if launch.script is not None:
                script = _resolve(root, path, launch.script)
            elif launch.module is not None:
                script = _resolve_module(root, path, launch.module)
            else:
                continue
            if script is not None:
                found.setdefault(os.path.realpath(script), []).append(LaunchLine(shown, launch))
    return found


_MODULE_SWITCH = re.compile(r"(?:^|\s)(?:-m|--module)\s")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _resolve_module(root: str, shell: str, module: str) -> str | None:
    """The file `python -m pkg.train` (`torchrun -m`, `accelerate launch -m`, `deepspeed --module`) runs:
    `pkg/train.py`, or `pkg/train/__main__.py` for a package, found as a script is (from the shell script's
    folder, else the project root), or under the root's `src/` (a project installed from a src layout). A module
    that no such file holds (`vllm.entrypoints...`, an installed package) starts no script of the project."""
    if len(module) > 1024 or _MODULE.fullmatch(module) is None:
        return None
    relative = module.replace(".", "/")
    for folder in (os.path.dirname(os.path.abspath(shell)), os.path.abspath(root),
                   os.path.join(os.path.abspath(root), "src")):
        for candidate in (relative + ".py", relative + "/__main__.py"):
            path = os.path.join(folder, candidate)
            if os.path.isfile(path):
                return path
    return None


def _resolve(root: str, shell: str, literal: str) -> str | None:
    """The script a launch line names: from the shell script's folder, else from the project root (where a
    launch script is usually run from). Not from the folders of whichever script asked first: the index is one
    per project."""
    if not literal or len(literal) > 4096 or "\x00" in literal:
        return None
    if os.path.isabs(literal):
        return literal if os.path.isfile(literal) else None
    for folder in (os.path.dirname(os.path.abspath(shell)), os.path.abspath(root)):
        path = os.path.normpath(os.path.join(folder, literal))
        if os.path.isfile(path):
            return path
    return None

