"""Which files to read: explicit paths, walked directories, default excludes, .gitignore and config excludes.

Inside a git work tree a walked directory is listed by `git ls-files` (tracked and untracked-but-not-ignored
files), which is exact about .gitignore semantics and faster than walking; elsewhere, or without git, the
directory is walked with os.scandir. Symbolic links to directories are not followed (no loops).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from precisionlint.engine import SourceFile
from precisionlint.sources import format_of

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "node_modules", "__pycache__", ".mypy_cache",
    ".ruff_cache", ".pytest_cache", ".tox", ".nox", "build", "dist", "site-packages", ".eggs", "*.egg-info",
    ".ipynb_checkpoints", "wandb", "mlruns", "lightning_logs",
)


@dataclass
class Discovery:
    files: list[SourceFile]
    missing: list[str]  # paths given on the command line that do not exist


def _excluded(relative: str, patterns: Sequence[str]) -> bool:
    """ruff-like matching: a pattern matches the whole relative path, any suffix of it, or any component."""
    if not patterns:
        return False
    parts = relative.split("/")
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if fnmatch.fnmatch(relative, bare) or fnmatch.fnmatch(relative, bare + "/*"):
            return True
        if "/" not in bare and any(fnmatch.fnmatch(part, bare) for part in parts):
            return True
    return False


def _git_files(directory: Path) -> list[str] | None:
    """Files under `directory` that git would not ignore, or None when it is not a git work tree."""
    probe = directory
    while True:
        if (probe / ".git").exists():
            break
        if probe.parent == probe:
            return None
        probe = probe.parent
    try:
        result = subprocess.run(
            ["git", "-C", str(directory), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, timeout=60, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return [name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def _walk(directory: Path) -> Iterator[str]:
    stack = [directory]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not any(fnmatch.fnmatch(entry.name, p) for p in DEFAULT_EXCLUDES):
                        stack.append(Path(entry.path))
                elif entry.is_file() or entry.is_symlink():
                    yield os.path.relpath(entry.path, directory).replace(os.sep, "/")
            except OSError:
                continue


def discover(
    paths: Sequence[str],
    root: Path,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    force_exclude: bool = False,
) -> Discovery:
    """Expand command-line paths into files to check, in a stable order without duplicates.

    Explicit files are always checked (so `precisionlint check fixtures/x.yaml` does what it says) unless
    `force_exclude` is set, as the pre-commit hook does, so that config excludes hold there too."""
    files: list[SourceFile] = []
    missing: list[str] = []
    seen: set[str] = set()

    def relative_to_root(path: Path) -> str:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    def add(fs_path: Path, display: str) -> None:
        fmt = format_of(fs_path.name)
        if fmt is None:
            return
        key = os.path.realpath(fs_path) if not fs_path.is_symlink() else os.path.abspath(fs_path)
        if key in seen:
            return
        seen.add(key)
        files.append(SourceFile(str(fs_path), display, fmt))

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            listed = _git_files(path) if respect_gitignore else None
            names = listed if listed is not None else list(_walk(path))
            for name in sorted(names):
                if format_of(name) is None:
                    continue
                parts = name.split("/")
                if listed is not None and any(
                    fnmatch.fnmatch(part, p) for part in parts[:-1] for p in DEFAULT_EXCLUDES
                ):
                    continue
                fs_path = path / name
                display = (Path(raw) / name).as_posix() if raw not in (".", "./") else name
                if _excluded(relative_to_root(fs_path), exclude):
                    continue
                if listed is not None and not os.path.lexists(fs_path):
                    continue  # deleted in the work tree but still in the index
                add(fs_path, display)
        elif os.path.lexists(path):
            if force_exclude and _excluded(relative_to_root(path), exclude):
                continue
            if format_of(path.name) is None and path.is_file():
                continue  # pre-commit passes only matching types; anything else is not ours to read
            add(path, raw)
        else:
            missing.append(raw)
    return Discovery(files, missing)


def matches_any(display_relative: str, patterns: Sequence[str]) -> bool:
    return _excluded(display_relative, patterns)
