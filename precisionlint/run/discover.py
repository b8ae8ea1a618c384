"""Which files to read: explicit paths, walked directories, default excludes, .gitignore and config excludes.

Inside a git work tree a walked directory is listed by `git ls-files` (tracked and untracked-but-not-ignored
files), which is exact about .gitignore semantics and faster than walking; elsewhere, or without git, the
directory is walked with os.scandir. Symbolic links to directories are not followed (no loops).

A symbolic link met while walking whose target does not exist, or that leads round in a loop, is skipped
(as black skips what it cannot stat, and ruff's maintainers treat the error it reports today as a bug): real
repositories commit such links (a dangling link into the author's home directory, a link to a file that was
since deleted), and an error for each would bury the findings. The skips are kept in `Discovery.skipped` for
`--show-files`. A path named on the command line is different: if it does not exist, or is a broken link, the
user asked for something that is not there, and that is an error.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from precisionlint.core.model import Format, SourceFile
from precisionlint.core.patterns import lazy_pattern
from precisionlint.sources import format_of

# Folders skipped by their name alone, because the name proves they hold no code of the project: version
# control, tools' caches, installed packages. Nothing else is skipped by its name: a Hydra config group `env/`,
# a package `wandb/` or `build/` are the user's. Other folders are skipped by what they hold (_generated_reason):
# a virtual environment (pyvenv.cfg), a conda environment (conda-meta/), run records of Weights & Biases,
# MLflow and Lightning, and setuptools' build output.
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox",
    ".nox", "site-packages", ".eggs", "*.egg-info", ".ipynb_checkpoints", ".precisionlint_cache",
    # A folder named `{{cookiecutter.name}}` (or copier's `{{ name }}`) is a project template: its files are
    # Jinja text that becomes Python or YAML only once rendered, and reading them as they are finds syntax errors
    # the project does not have.
    "*{{*}}*",
)
_EXCLUDE_REASONS = {".git": "version control", ".hg": "version control", ".svn": "version control",
                    "node_modules": "installed packages", "site-packages": "installed packages",
                    ".eggs": "installed packages"}


def _name_reason(name: str) -> str:
    """Why a default-excluded folder name is skipped, in words for --show-files."""
    if name in _EXCLUDE_REASONS:
        return _EXCLUDE_REASONS[name]
    if "{{" in name:
        return "a project template"
    if name.endswith(".egg-info"):
        return "package metadata"
    return "a tool's cache"


def _generated_reason(name: str, children: set[str]) -> str | None:
    """Why a folder holding `children` (the names directly inside it) is not the project's code, or None: a
    virtual environment (pyvenv.cfg, as the venv module writes it), a conda environment (conda-meta/), or the
    records of training runs, named and shaped as the tools write them."""
    if "pyvenv.cfg" in children:
        return "a virtual environment (pyvenv.cfg)"
    if "conda-meta" in children:
        return "a conda environment (conda-meta)"
    if name == "wandb" and ("latest-run" in children or any(c.startswith(("run-", "offline-run-"))
                                                             for c in children)):
        return "Weights & Biases run records"
    if name == "lightning_logs" and any(c.startswith("version_") for c in children):
        return "Lightning run logs"
    if name == "mlruns" and (".trash" in children or "models" in children and "0" in children):
        return "MLflow run records"
    if name == "build" and any(c == "lib" or c.startswith(("lib.", "bdist.", "temp.")) for c in children):
        return "setuptools build output"
    return None


class Discovery:
    def __init__(
        self,
        files: Sequence[SourceFile],
        missing: list[str],
        errors: list[str] | None = None,
        skipped: list[tuple[str, str]] | None = None,
    ) -> None:
        self.files = files
        self.missing = missing  # paths given on the command line that do not exist
        self.errors = errors if errors is not None else []  # one line each: paths that cannot be listed
        # (shown path, why) for each walked symbolic link that leads nowhere: not checked, not an error
        self.skipped = skipped if skipped is not None else []


# A link whose target is missing (ENOENT, or ENOTDIR for a target below a file) or that loops (ELOOP). Any other
# failure to stat (permission denied) is left to the reader, which reports it as io-error.
_LEADS_NOWHERE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


def broken_link(path: str) -> str | None:
    """Why the symbolic link `path` leads nowhere ("broken symbolic link to X", "symbolic link loop"), or None
    when its target can be opened (or `path` is not a link at all)."""
    try:
        os.stat(path)
        return None
    except OSError as exc:
        if exc.errno not in _LEADS_NOWHERE or not os.path.islink(path):
            return None
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
        try:
            return f"broken symbolic link to {os.readlink(path)}"
        except OSError:
            return "broken symbolic link"


def _excluded(relative: str, patterns: Sequence[str]) -> bool:
    """ruff-like matching: a pattern matches the whole relative path, any suffix of it, or any component; and
    gitignore-style, as per-file-ignores (`**/*.yaml` matches a file at the root too)."""
    if not patterns:
        return False
    from precisionlint.run.config import glob_matches

    parts = relative.split("/")
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if fnmatch.fnmatch(relative, bare) or fnmatch.fnmatch(relative, bare + "/*"):
            return True
        if "/" not in bare and any(fnmatch.fnmatch(part, bare) for part in parts):
            return True
        if glob_matches(relative, pattern):
            return True
    return False


def _git_files(directory: Path, unreadable: list[tuple[str, str]] | None = None) -> list[str] | None:
    """Files under `directory` that git would not ignore, or None when it is not a git work tree. Folders git
    could not open are added to `unreadable` as (relative path, reason)."""
    try:
        probe = directory.resolve()  # absolute: the parent of a relative "." is "." again
        os.listdir(directory)  # unreadable: say so (the walk does), rather than let git half-list it
    except (OSError, RuntimeError):
        return None
    while True:
        try:
            if (probe / ".git").exists():
                break
        except OSError:  # a parent we may not look into: not a work tree we can use
            return None
        if probe.parent == probe:
            return None
        probe = probe.parent
    import subprocess  # only for directories: checking named files never pays for it

    try:
        result = subprocess.run(
            ["git", "-C", str(directory), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, timeout=60, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    if unreadable is not None:
        for line in result.stderr.decode("utf-8", "surrogateescape").splitlines():
            found = _GIT_UNREADABLE.match(line)
            if found:
                unreadable.append((found.group(1).rstrip("/"), found.group(2)))
    return [name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


# git ls-files skips a folder it cannot open with this warning (and exits 0).
_GIT_UNREADABLE = lazy_pattern(globals(), "_GIT_UNREADABLE", r"warning: could not open directory '(.*)': (.*)$")


def _walk(
    directory: Path,
    unreadable: list[tuple[str, str]] | None = None,
    links: set[str] | None = None,
    excluded: list[tuple[str, str]] | None = None,
) -> Iterator[str]:
    """Relative posix paths of the files under `directory`, in the order sorted() gives the paths, one at a time:
    regular files and symbolic links, never FIFOs, sockets or devices, and never through a symbolic link to a
    directory (no loops). The names that are links are added to `links` (the caller stats only those to find the
    ones that lead nowhere). Default-excluded directories and those _generated_reason recognises are not entered;
    each is added to `excluded` as (relative path, why), and each folder that cannot be listed to `unreadable`, as
    the walk meets them.

    Sorted without a list of every path (a run held them all at once: 19,000 paths, 2.3 MB, for a 4x copy of four
    repositories, and the memory they left in use): each folder's entries are sorted with a folder's name followed
    by "/", which puts its files exactly where sorting the whole paths would (a file's name holds no "/", so it
    compares with every path below a folder as it compares with the folder's name and "/")."""
    stack: list[tuple[Iterator[tuple[str, str | None]], str]] = []
    entries = _sorted_entries(os.fspath(directory), "", unreadable, links, excluded)
    if entries:
        stack.append((iter(entries), ""))
    while stack:
        iterator, prefix = stack[-1]
        entry = next(iterator, None)
        if entry is None:
            stack.pop()
            continue
        key, folder = entry
        if folder is None:
            yield prefix + key
            continue
        below = _sorted_entries(folder, prefix + key, unreadable, links, excluded)
        if below:
            stack.append((iter(below), prefix + key))


def _sorted_entries(
    current: str,
    prefix: str,
    unreadable: list[tuple[str, str]] | None,
    links: set[str] | None,
    excluded: list[tuple[str, str]] | None,
) -> list[tuple[str, str | None]]:
    """The entries of the folder `current` (`prefix`: its relative path and "/", "" at the top) to walk, sorted:
    (name, None) for a file or a link, (name + "/", its path) for a folder to enter."""
    try:
        with os.scandir(current) as iterator:
            entries = list(iterator)
    except OSError as exc:  # never silently: a folder left unchecked must be named
        if unreadable is not None:
            unreadable.append((prefix.rstrip("/"), exc.strerror or type(exc).__name__))
        return []
    if prefix:
        why = _generated_reason(os.path.basename(current), {entry.name for entry in entries})
        if why is not None:
            if excluded is not None:
                excluded.append((prefix.rstrip("/"), why))
            return []
    kept: list[tuple[str, str | None]] = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if not _default_excluded(entry.name):
                    kept.append((entry.name + "/", entry.path))
                elif excluded is not None:
                    excluded.append((prefix + entry.name, _name_reason(entry.name)))
            elif entry.is_symlink():
                if links is not None:
                    links.add(prefix + entry.name)
                kept.append((entry.name, None))
            elif entry.is_file():
                kept.append((entry.name, None))
        except OSError:
            continue
    kept.sort()
    return kept


def _generated_in_listing(names: list[str]) -> dict[str, str]:
    """_generated_reason of the folders of a git listing, from the names it lists (git lists what a work tree
    holds untracked and not ignored: a virtual environment nobody ignored, a `wandb/` of run records)."""
    children: dict[str, set[str]] = {}
    for name in names:
        if "pyvenv.cfg" in name or "conda-meta/" in name or any(word in name for word in _RUN_FOLDERS):
            parts = name.split("/")
            for index in range(1, len(parts)):
                children.setdefault("/".join(parts[:index]), set()).add(parts[index])
    found: dict[str, str] = {}
    for folder, inside in children.items():
        why = _generated_reason(folder.rpartition("/")[2], inside)
        if why is not None:
            found[folder] = why
    return found


_RUN_FOLDERS = ("wandb/", "lightning_logs/", "mlruns/", "build/")


def _listed_folder_skipped(folder: str, generated: dict[str, str], excluded: list[tuple[str, str]]) -> bool:
    """Whether a folder of a git listing is skipped: one of its folders (outermost first) is default-excluded by
    name or recognised by what it holds; that folder is added to `excluded`."""
    parts = folder.split("/")
    for index, part in enumerate(parts):
        prefix = "/".join(parts[:index + 1])
        if _default_excluded(part):
            excluded.append((prefix, _name_reason(part)))
            return True
        if prefix in generated:
            excluded.append((prefix, generated[prefix]))
            return True
    return False


_EXCLUDED_NAMES: dict[str, bool] = {}
# The default excludes without a wildcard are compared as names (as fnmatch does: after os.path.normcase), the
# others through fnmatch; a warm run over a large tree met each folder name through sixteen fnmatch calls.
_PLAIN_EXCLUDES = frozenset(os.path.normcase(p) for p in DEFAULT_EXCLUDES if not any(c in p for c in "*?["))
_GLOB_EXCLUDES = tuple(p for p in DEFAULT_EXCLUDES if any(c in p for c in "*?["))


def _default_excluded(name: str) -> bool:
    cached = _EXCLUDED_NAMES.get(name)
    if cached is None:
        cached = _EXCLUDED_NAMES[name] = os.path.normcase(name) in _PLAIN_EXCLUDES or any(
            fnmatch.fnmatch(name, p) for p in _GLOB_EXCLUDES)
    return cached


def _templated(name: str) -> bool:
    """A file or folder name with a Jinja placeholder (`{{cookiecutter.name}}`): part of a project template."""
    opening = name.find("{{")
    return opening != -1 and name.find("}}", opening + 2) != -1


def _printable(text: str) -> str:
    """A path as it can be printed: names that are not valid UTF-8 arrive with surrogate escapes, which no
    renderer can encode; they are shown with U+FFFD instead (the file is still read by its real name)."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


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
    from precisionlint.run.listed import ListedFiles

    files = ListedFiles()
    missing: list[str] = []
    errors: list[str] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    root_resolved = root.resolve()

    def relative_to_root(path: Path) -> str:
        # Excludes match the path as named, not what a link at its end points to (a link may lead out of the
        # tree, or nowhere); the folders above it are resolved, as the root is.
        try:
            absolute = Path(os.path.abspath(path))
            if absolute.parent == absolute:
                return absolute.relative_to(root_resolved).as_posix()
            return (Path(os.path.realpath(absolute.parent)) / absolute.name).relative_to(root_resolved).as_posix()
        except (ValueError, OSError):  # outside the root
            return path.as_posix()

    def add(fs_path: str, display: str, key: str, fmt: Format | None = None, link: bool = False) -> None:
        fmt = fmt or format_of(fs_path)
        if fmt is None or key in seen:
            return
        seen.add(key)
        files.append(SourceFile(fs_path, _printable(display), fmt))
        if link:
            files.mark_link()

    for raw in paths:
        path = Path(raw)
        try:
            is_dir = path.is_dir()
        except OSError as exc:  # e.g. permission denied on a parent directory
            errors.append(f"{_printable(raw)}: cannot read: {exc.strerror or type(exc).__name__}")
            continue
        if is_dir:
            unreadable: list[tuple[str, str]] = []
            links: set[str] = set()
            excluded: list[tuple[str, str]] = []
            listed = _git_files(path, unreadable) if respect_gitignore else None
            # git's list, sorted; or the walk, which yields the paths in that order as it goes
            names = sorted(listed) if listed is not None else _walk(path, unreadable, links, excluded)
            generated = _generated_in_listing(listed) if listed is not None else {}
            base = str(path)  # as pathlib spells it: "src/" and "./src" become "src", "." stays "."
            display_base = "" if raw in (".", "./") else path.as_posix() + "/"
            broken: list[tuple[str, str]] = []  # the links that lead nowhere, after the folders left out
            real_prefix = os.path.join(os.path.realpath(base), "")  # joined by concatenation: once per file
            fs_prefix = "" if base == "." else os.path.join(base, "")
            # Where the path, the name shown and the real path are spelled alike (a folder named by its absolute
            # path), a file's SourceFile holds one string for them, not three: a run holds one per file.
            shown_as_read = display_base == fs_prefix
            real_as_read = real_prefix == fs_prefix
            # Relative to the root once per directory, not once per file (resolve() is a syscall per part).
            relative_base: str | None = None
            walk_exclude = list(exclude)
            if exclude:
                relative_base = relative_to_root(path)
                relative_base = "" if relative_base == "." else relative_base + "/"
                if relative_base and not force_exclude:
                    # A directory named on the command line is checked even where an exclude covers it, as a
                    # named file is (and as ruff walks a named folder): a pattern that covers the folder itself
                    # prunes nothing below it. `check rules/x` in a clone that excludes rules/ checks rules/x.
                    walk_exclude = [p for p in exclude if not _excluded(relative_base.rstrip("/"), [p])]
            excluded_dirs: dict[str, bool] = {}
            # The run keeps its files as a folder and a name each (run.listed): the folders numbered here.
            numbered: dict[str, int] = {}
            shown_prefix = fs_prefix if shown_as_read else display_base
            printable_prefix = shown_prefix.isascii()
            # With one folder named, the walk and git list each file once (git: once per stage of a file in
            # a merge conflict, adjacent in sorted order), so that no set of every path is needed to drop
            # repeats: the previous name is enough.
            alone = len(paths) == 1
            previous = ""
            for name in names:
                fmt = format_of(name)
                if fmt is None:
                    continue
                slash = name.rfind("/")
                if "{{" in name and _templated(name[slash + 1:]):
                    continue  # `run_{{cookiecutter.task}}.py`: a template's file (see DEFAULT_EXCLUDES)
                if listed is not None and slash != -1:
                    folder = name[:slash]
                    hidden = excluded_dirs.get(folder)
                    if hidden is None:
                        hidden = excluded_dirs[folder] = _listed_folder_skipped(folder, generated, excluded)
                    if hidden:
                        continue
                fs_path = fs_prefix + name
                if relative_base is not None and walk_exclude and _excluded(relative_base + name, walk_exclude):
                    continue
                link = False
                if listed is not None:  # git lists links as they are committed, broken or not
                    try:
                        # the common case: one call, the cost of the lexists it replaces, and whether it is a link
                        link = stat.S_ISLNK(os.lstat(fs_path).st_mode)
                    except OSError:
                        continue  # deleted in the work tree but still in the index
                    why = broken_link(fs_path) if link else None
                    if why is not None:
                        broken.append((_printable(display_base + name), why))
                        continue
                elif name in links:  # the walk knows which entries are links: only those need a stat
                    link = True
                    why = broken_link(fs_path)
                    if why is not None:
                        broken.append((_printable(display_base + name), why))
                        continue
                if alone:
                    if name == previous:
                        continue
                    previous = name
                    if printable_prefix and name.isascii():
                        folder_name = name[:slash + 1]
                        number = numbered.get(folder_name)
                        if number is None:
                            number = numbered[folder_name] = files.folder(fs_prefix + folder_name,
                                                                          shown_prefix + folder_name)
                        files.add(number, name[slash + 1:], fmt)
                    else:
                        files.append(SourceFile(fs_path, _printable(shown_prefix + name), fmt))
                    if link:
                        files.mark_link()
                    continue
                # Neither git nor the walk goes through a symbolic link to a directory, so the real path of
                # a listed file is the real path of the directory it was listed under, plus its name.
                add(fs_path, fs_path if shown_as_read else display_base + name,
                    fs_path if real_as_read else real_prefix + name, fmt, link)
            for folder, reason in unreadable:  # the walk's as it met them (git's before it listed anything)
                shown = (display_base + folder) if folder else (display_base.rstrip("/") or raw)
                errors.append(f"{_printable(shown)}: cannot read directory: {reason}")
            if listed is None:  # the folders the walk left out, then the links that lead nowhere
                skipped.extend((_printable(display_base + folder + "/"), reason)
                               for folder, reason in sorted(dict(excluded).items()))
                skipped.extend(broken)
            else:  # git's order: the links, then the folders left out
                skipped.extend(broken)
                for folder, reason in sorted(dict(excluded).items()):
                    skipped.append((_printable(display_base + folder + "/"), reason))
        elif os.path.lexists(path):
            if force_exclude and _excluded(relative_to_root(path), exclude):
                continue
            why = broken_link(raw)
            if why is not None:  # named, so asked for: an error, as a missing path is
                errors.append(f"{_printable(raw)}: {why}")
                continue
            try:
                if format_of(path.name) is None and path.is_file():
                    continue  # pre-commit passes only matching types; anything else is not ours to read
                link = path.is_symlink()
                key = os.path.abspath(path) if link else os.path.realpath(path)
            except OSError:
                link = False
                key = os.path.abspath(path)
            add(str(path), raw, key, link=link)
        else:
            missing.append(_printable(raw))
    return Discovery(files, missing, errors, skipped)


def matches_any(display_relative: str, patterns: Sequence[str]) -> bool:
    return _excluded(display_relative, patterns)
