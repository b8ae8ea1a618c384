"""The project around a file: its root, the versions it declares, and the files read together with it.

Built lazily, once per run or language server (project/model.py keeps it), and only for what a rule asks: a
one-file check that no version-dependent or cross-file rule questions never lists a directory. Each directory is
looked at once (one listing, each pin file read once) and shared by every file under it; a linked file is loaded
once.

Versions come from the pin files of the file's directory and its parents, nearest first, up to the project
boundary: a directory with pyproject.toml, setup.py or setup.cfg, or the top of the git work tree. A package
declared nearer wins (an example folder's requirements.txt over the repository's pyproject.toml), and several
files of one directory are read together as the loosest reading of all of them. A folder's code that imports an
in-project package keeping pins of its own (a part's vendored package: project.vendored) runs with those pins
too, after the folder's own and before its parent's; no other pin off the file's folder chain counts for it.
`[tool.precisionlint] target-versions` (in pyproject.toml, or `target-versions` in .precisionlint.toml /
precisionlint.toml) replaces them. Unknown stays unknown: `version()` is None.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Collection, Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.patterns import lazy_pattern
from precisionlint.core.racy_stat import UNSETTLED, settled

if TYPE_CHECKING:
    from precisionlint.core.model import Document
    from precisionlint.project.model import ProjectModel
    from precisionlint.project.pins import Pins
    from precisionlint.project.versions import VersionRange

# Which distribution names stand for one framework, in the order they are preferred.
FRAMEWORK_PACKAGES: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "lightning": ("lightning", "pytorch-lightning"),
    "transformers": ("transformers",),
    "accelerate": ("accelerate",),
    "deepspeed": ("deepspeed",),
    "python": ("python",),
}
_BOUNDARY_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")
# precisionlint's own configuration files (keys at the top level): they may state target-versions.
_CONFIG_FILES = (".precisionlint.toml", "precisionlint.toml")


# A listing of more names than this is kept as a frozenset (looked up by hash); a shorter one as a tuple.
_SET_FROM = 32


def _listing(names: list[str]) -> Collection[str]:
    """A directory's names as kept for the run: a run (every worker too) keeps one for each folder it meets, and
    a frozenset's table costs several times a tuple's, so a short listing is a tuple (looked up by scanning it)
    of interned names, which recur in folder after folder (`__init__.py`, `utils.py`, `config.yaml`)."""
    if len(names) > _SET_FROM:
        return frozenset(names)
    return tuple(map(sys.intern, names))


class Directory:
    """What one directory declares itself. Listed when first met; its pin files are read only when a rule
    first asks for a version."""

    __slots__ = ("path", "model", "_pins", "_targets", "boundary", "names", "_wide_files", "_wide_pins",
                 "_imported", "_imported_pins")

    def __init__(self, path: str, model: ProjectModel) -> None:
        self.path = path
        self.model = model  # the project model that keeps it, and the directories of its imported packages
        self._pins: Pins | None = None
        self._targets: Pins = {}  # [tool.precisionlint] target-versions
        try:
            self.names = _listing(os.listdir(path))
        except OSError:
            self.names = ()
        self.boundary = any(name in self.names for name in _BOUNDARY_FILES) or ".git" in self.names
        self._wide_files: list[str] | None = None
        self._wide_pins: Pins | None = None
        self._imported: list[Directory] | None = None
        self._imported_pins: Pins | None = None

    @property
    def pins(self) -> Pins:
        if self._pins is None:
            self._pins = {}
            self._read()
        return self._pins

    @property
    def targets(self) -> Pins:
        self.pins  # noqa: B018  (reads the pin files, target-versions among them)
        return self._targets

    def pin_files(self) -> list[str]:
        from precisionlint.project.pin_files import dockerfiles, other_pin_files, requirement_files

        names = (*_CONFIG_FILES, *_PIN_FILES, *requirement_files(self.names), *dockerfiles(self.names),
                 *other_pin_files(self.names))
        return [name for name in dict.fromkeys(names) if name in self.names]

    def wide_files(self) -> list[str]:
        """The pin files of the folders under this root that hold the whole project's environment
        (pin_files.PROJECT_PIN_FOLDERS: docker/environment.yml, requirements/base.txt, requirements/pytorch/
        base.txt), as paths relative to it. Only those folders and the folders directly inside them are
        listed; a folder that is a project of its own (its own pyproject.toml, setup.py, setup.cfg or .git)
        declares for itself."""
        if self._wide_files is not None:
            return self._wide_files
        from precisionlint.project.pin_files import PROJECT_PIN_FOLDERS, is_project_pin_file

        found: list[str] = []
        for top in sorted(self.names):
            if top.lower() not in PROJECT_PIN_FOLDERS:
                continue
            pending = [(top, 0)]
            while pending:
                relative, depth = pending.pop()
                try:
                    with os.scandir(os.path.join(self.path, relative)) as entries:
                        listing = sorted((entry.name, entry.is_dir(), entry.is_file()) for entry in entries)
                except OSError:
                    continue
                names = {name for name, _, _ in listing}
                if depth and (names & {*_BOUNDARY_FILES, ".git"}):
                    continue
                for name, is_dir, is_file in listing:
                    if is_file and is_project_pin_file(top, name):
                        found.append(f"{relative}/{name}")
                    elif is_dir and depth == 0 and not name.startswith("."):
                        pending.append((f"{relative}/{name}", depth + 1))
        self._wide_files = found = sorted(found)[:64]
        return found

    @property
    def wide_pins(self) -> Pins:
        """What wide_files declare together (the loosest reading of them all)."""
        if self._wide_pins is None:
            self._wide_pins = {}
            for relative in self.wide_files():
                _read_pin_file(os.path.join(self.path, relative), relative, self._wide_pins)
        return self._wide_pins

    def imported(self) -> list[Directory]:
        """The folders directly inside this one that keep pins of their own and that this folder's code imports
        (project.vendored): the in-project packages its files run with."""
        if self._imported is None:
            from precisionlint.project.vendored import imported_packages

            self._imported = [self.model.directory(os.path.join(self.path, name))
                              for name in imported_packages(self.path, self.names)]
        return self._imported

    @property
    def imported_pins(self) -> Pins:
        """What the imported packages' pin files declare together (the loosest reading of them all), each
        named by its path from here (`ImageBind/requirements.txt: torch==1.13.0`)."""
        if self._imported_pins is None:
            table: Pins = {}
            for package in self.imported():
                folder = os.path.basename(package.path)
                for name, found in package.pins.items():
                    found = found._replace(source=f"{folder}/{found.source}")
                    table[name] = table[name].union(found) if name in table else found
            self._imported_pins = table
        return self._imported_pins

    def signature(self, now_ns: int | None = None, with_imported: bool = True) -> str:
        """Names and stat of the pin files: what a cached result's versions came from (see file_signature),
        with those of the in-project packages this folder's code imports unless `with_imported` is false (a
        folder above the project's root: Project._tables does not read them there)."""
        parts = []
        for name in (*self.pin_files(), *(self.wide_files() if self.boundary else ())):
            signature = file_signature(os.path.join(self.path, name), now_ns)
            if signature is not None:
                parts.append(f"{name}:{signature}")
        if with_imported:
            for package in self.imported():
                inner = package.signature(now_ns)
                parts.append(f"{os.path.basename(package.path)}/[{inner}]")
        return ",".join(parts)

    def _read(self) -> None:
        names = self.pin_files()
        if not names:
            return  # the readers are not imported for a folder with nothing to read (a one-file check's)
        from precisionlint.project import pins as readers

        pins = self._pins if self._pins is not None else {}
        for name in names:
            path = os.path.join(self.path, name)
            if name not in _CONFIG_FILES and name != "pyproject.toml":
                _read_pin_file(path, name, pins)
                continue
            text = readers.read_text(path)
            if text is None:
                continue
            if name in _CONFIG_FILES:
                data = _toml(text)
                if data is not None and not self._targets:  # the first configuration file found wins
                    targets = data.get("target-versions", data.get("target_versions"))
                    readers.read_target_versions(targets, self._targets, name)
            elif name == "pyproject.toml":
                data = _toml(text)
                if data is not None:
                    readers.read_pyproject(data, pins)
                    tool = data.get("tool")
                    table = tool.get("precisionlint") if isinstance(tool, dict) else None
                    if isinstance(table, dict) and not self._targets:
                        targets = table.get("target-versions", table.get("target_versions"))
                        readers.read_target_versions(targets, self._targets, "pyproject.toml")


def _read_pin_file(path: str, display: str, pins: Pins) -> None:
    """One pin file other than pyproject.toml and precisionlint's own configuration, by its name."""
    from precisionlint.project import pins as readers
    from precisionlint.project.pin_files import LOCK_FILES, is_dockerfile, is_requirements

    name = os.path.basename(path)
    if is_requirements(name) or (name.lower().endswith((".txt", ".in")) and not is_dockerfile(name)):
        readers.read_requirements(path, pins, display=display)
        return
    text = readers.read_text(path)
    if text is None:
        return
    if name == "setup.py":
        readers.read_setup_py(text, pins, display)
    elif name == "setup.cfg":
        readers.read_setup_cfg(text, pins, display)
    elif is_dockerfile(name):
        readers.read_dockerfile(text, pins, display)
    elif name == "pixi.toml":
        data = _toml(text)
        if data is not None:
            readers.read_pixi(data, pins, display)
    elif name in LOCK_FILES:
        readers.read_lock(text, pins, display)
    else:
        readers.read_environment_yml(text, pins, display)


def file_signature(path: str, now_ns: int | None = None) -> str | None:
    """What stat says of a file another file's findings read (size, modification and change times, inode),
    or None when it cannot be had. The change time moves on every write, even one that puts the old
    modification time back. A file changed so recently before `now_ns` (the run's start) that it may change
    again within the same timestamp tick, unseen by stat (precisionlint.core.racy_stat.settled), gets the cache's
    UNSETTLED mark: results that depend on it are not stored, so that no later run reuses them."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return stat_signature(info, time.time_ns() if now_ns is None else now_ns)


def stat_signature(info: os.stat_result, now_ns: int) -> str:
    """file_signature of a stat already taken."""
    signature = f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"
    return signature if settled(info, now_ns) else signature + UNSETTLED


def _toml(text: str) -> dict | None:
    try:
        import tomllib

        return tomllib.loads(text)
    except Exception:  # a broken pyproject.toml declares nothing we can use (and config.py reports it)
        return None


class Project:
    """The project of one directory: the chain of directories from it up to the boundary, in the project model
    that built it (which keeps what it reads of other files: linked documents, config readers, launch lines)."""

    def __init__(self, chain: list[Directory], model: ProjectModel, root: str | None = None) -> None:
        self.chain = chain
        self.model = model
        self.root = root if root is not None else chain[-1].path if chain else os.getcwd()
        self._versions: dict[str, VersionRange | None] = {}

    def version(self, framework: str) -> VersionRange | None:
        """The declared range of a framework ("torch", "lightning", "transformers", ...) or of any package
        by its name; None when nothing declares it."""
        if framework in self._versions:
            return self._versions[framework]
        names = FRAMEWORK_PACKAGES.get(framework)
        if names is None:
            from precisionlint.project.pins import normalize  # the pin readers: imported when pins are read

            names = (normalize(framework),)
        found: VersionRange | None = None
        for directory in reversed(self.chain):  # target-versions stated at the boundary win over every pin
            hits = [directory.targets[n] for n in names if n in directory.targets]
            if hits:
                found = hits[0]
        if found is None:
            # Nearest declaration first; then the folders that hold the whole project's environment
            # (docker/environment.yml, requirements/base.txt) where no directory of the chain declares it.
            for table in self._tables():
                hits = [table[n] for n in names if n in table]
                if hits:
                    found = hits[0]
                    for other in hits[1:]:
                        found = found.union(other)
                    break
        self._versions[framework] = found
        return found

    def _tables(self) -> Iterator[Pins]:
        """The declarations that speak for the project's files, nearest first, each read only when asked: a
        folder's own pins, then those of the in-project packages its code imports (a part's vendored package
        with its own requirements), then its parent's; at the boundary, the folders that hold the whole
        project's environment (docker/environment.yml, requirements/base.txt). Above the root of a project
        that declares no boundary (ProjectModel._unbounded_root: the highest folder the user named), a folder's
        pins still count but not the packages its code imports: that code (a home folder's, /tmp's) is not
        the project's, and looking for it read up to 400 Python files of each such folder for one file."""
        inside_root = True
        for directory in self.chain:
            yield directory.pins
            if directory is self.chain[-1] and directory.boundary:
                yield directory.wide_pins
            if inside_root:
                yield directory.imported_pins
            inside_root = inside_root and directory.path != self.root

    def is_package(self, name: str) -> bool:
        """Whether the project is that package itself (its packaging files give the name): its files then run
        with the package as this tree builds it, not a release its pins choose."""
        wanted = _normal(name)
        return any(wanted in _package_names(directory) for directory in self.chain if directory.boundary)

    def covers(self, file_path: str, found: VersionRange) -> bool:
        """Whether a declaration speaks for a file: an environment's pins (requirements, conda, Docker, lock
        files) for every file of the project, a package's metadata (setup.py, setup.cfg, pyproject.toml) for
        the package it installs: files under `src/`, or under a folder with an `__init__.py` named as the
        package is (`speechbrain/`). An example or a benchmark beside the package runs in whatever
        environment its user made, which the package's floor does not describe."""
        declared_in = os.path.basename(found.source.partition(": ")[0].split(",")[0].split(" FROM ")[0])
        if declared_in not in _BOUNDARY_FILES:
            return True
        folder = os.path.dirname(os.path.abspath(file_path))
        for directory in self.chain:
            if declared_in not in directory.names:
                continue
            relative = os.path.relpath(folder, directory.path).replace(os.sep, "/")
            top = relative.split("/")[0]
            if relative == "." or top == os.pardir:
                return relative == "."
            if top == "src":
                return True
            return os.path.isfile(os.path.join(directory.path, top, "__init__.py")) and \
                _normal(top) in _package_names(directory)
        return True

    def resolve(self, base_file: str, literal: str) -> str | None:
        """The file a literal path names, relative to the file that names it, then to the project root and
        the directories between; None when no such regular file exists (a link that does not resolve is
        ignored, never reported)."""
        if not literal or len(literal) > 4096 or "\x00" in literal or "://" in literal:
            return None
        literal = os.path.expanduser(literal) if literal.startswith("~") else literal
        if os.path.isabs(literal):
            return literal if os.path.isfile(literal) else None
        candidates = [os.path.dirname(os.path.abspath(base_file))]
        candidates += [d.path for d in self.chain]
        candidates.append(os.getcwd())
        for folder in dict.fromkeys(candidates):
            path = os.path.normpath(os.path.join(folder, literal))
            if os.path.isfile(path):
                return path
        return None

    def document(self, path: str) -> Document | None:
        return self.model.load_linked(path)

    def linked(self, base_file: str, literal: object) -> tuple[str, Document] | None:
        """The file a path written in `base_file` names, with its document; None for a value that is not a
        literal path (not a string, or one holding a shell `$VARIABLE`), a path that does not resolve, and a
        file that cannot be read."""
        if not isinstance(literal, str) or "$" in literal:
            return None
        path = self.resolve(base_file, literal)
        document = self.document(path) if path is not None else None
        return (path, document) if path is not None and document is not None else None


def _normal(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


_NAME_WRITTEN = lazy_pattern(globals(), "_NAME_WRITTEN", r"""\bname\s*=\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']""")


def _package_names(directory: Directory) -> set[str]:
    """The names a directory's packaging files give (`name = "speechbrain"`, `name="peft"`), normalised."""
    names: set[str] = set()
    from precisionlint.project.pins import read_text

    for file_name in _BOUNDARY_FILES:
        if file_name in directory.names:
            text = read_text(os.path.join(directory.path, file_name)) or ""
            names.update(_normal(match.group(1)) for match in _NAME_WRITTEN.finditer(text))
    return names


def disk_path(document: Document) -> str:
    """Where a checked document is on disk (the engine records it beside the path findings show), the path
    that the paths written in it resolve from."""
    return document.fs_path or document.path


def project_of(document: Document) -> Project:
    """The project of a document, built once per document by the current project model (project.model)."""
    cached = document.project
    if cached is None:
        from precisionlint.project.model import current

        cached = document.project = current().project_for(disk_path(document))
    return cached


def is_pin_file(name: str) -> bool:
    """Whether a file of this name declares versions for the files under its directory."""
    from precisionlint.project.pin_files import other_pin_files, requirement_files

    return name in _CONFIG_FILES or name in _PIN_FILES or bool(requirement_files(frozenset({name}))) \
        or bool(other_pin_files((name,)))


def display_path(path: str) -> str:
    """A linked file's path as findings show paths: relative to the working directory when it is inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")
