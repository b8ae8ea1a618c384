"""The in-project packages a folder's code imports, when they keep pins of their own.

A part of a repository often carries a package it runs (LLaMA-Adapter's imagebind_LLM/ holds ImageBind/, whose
own requirements.txt pins torch==1.13.0, and imagebind_LLM's setup installs that file first). The part's code
imports the package (`from ImageBind.models import imagebind_model`), so the package's requirements are part of
the environment that runs the part: its pins count for the part's files where the part declares nothing itself,
before the pins of the folders above it. A folder beside the part, or one inside it that none of its code
imports, declares nothing for it: pins off a file's folder chain apply only through such an import.

Cheap by construction: only the folders directly inside a directory that hold a pin file are candidates, and
the directory's Python files are read only when there is one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection

from precisionlint.project.pin_files import PROJECT_PIN_FOLDERS, dockerfiles, other_pin_files, requirement_files

# Where the importing code is looked for: the folder's own files and its folders, this deep (the part's scripts
# and its model package: imagebind_LLM/llama/llama_adapter.py), and this many files at most.
DEPTH = 2
_MAX_FILES = 400
_MAX_BYTES = 1_000_000
_PACKAGE_PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")
_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})
# Folders that are never an imported package: documentation (Sphinx's conf.py is no package), and the folders that
# hold the whole project's environment (docker/, requirements/: read as such at the boundary).
_NOT_PACKAGES = frozenset({"docs", "doc", "documentation"}) | PROJECT_PIN_FOLDERS


def _declares(names: frozenset[str]) -> bool:
    return any(name in names for name in _PACKAGE_PIN_FILES) or bool(
        requirement_files(names) or dockerfiles(names) or other_pin_files(names))


def candidate_packages(path: str, names: Collection[str]) -> list[str]:
    """The folders directly inside `path` whose names can be imported, that hold Python code of their own (a
    module or a package's __init__.py at their top) and a pin file."""
    found = []
    for name in sorted(names):
        if name.startswith(".") or name in _SKIPPED or name.lower() in _NOT_PACKAGES or not name.isidentifier():
            continue
        folder = os.path.join(path, name)
        if not os.path.isdir(folder):
            continue
        try:
            inside = frozenset(os.listdir(folder))
        except OSError:
            continue
        if _declares(inside) and any(entry.endswith(".py") and entry != "setup.py" for entry in inside):
            found.append(name)
    return found


def imported_packages(path: str, names: Collection[str]) -> list[str]:
    """The candidate_packages of `path` that a Python file of `path` (outside that package) imports by its name:
    `import ImageBind.data`, `from ImageBind.models import ...`."""
    candidates = candidate_packages(path, names)
    if not candidates:
        return []
    pattern = re.compile(r"^[ \t]*(?:from|import)[ \t]+(" + "|".join(map(re.escape, candidates)) + r")\b",
                         re.MULTILINE)
    found: set[str] = set()
    read = 0
    pending = [(path, 0)]
    while pending and read < _MAX_FILES and len(found) < len(candidates):
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as entries:
                listing = sorted((entry.name, entry.is_dir(), entry.is_file()) for entry in entries)
        except OSError:
            continue
        for name, is_dir, is_file in listing:
            if is_dir:
                if depth < DEPTH and not name.startswith(".") and name not in _SKIPPED and \
                        not (depth == 0 and name in candidates):
                    pending.append((os.path.join(folder, name), depth + 1))
            elif is_file and name.endswith(".py") and read < _MAX_FILES:
                read += 1
                text = _text(os.path.join(folder, name))
                # The pattern only where the text names a candidate not yet found: a scan for a name is a
                # fraction of the pattern's, which is tried at every position of the text
                if text and any(candidate in text for candidate in candidates if candidate not in found):
                    found.update(match.group(1) for match in pattern.finditer(text))
    return [name for name in candidates if name in found]


def _text(path: str) -> str:
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return ""
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""
