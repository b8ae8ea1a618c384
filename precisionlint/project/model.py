"""The project model: everything one process has learnt of the projects on disk, in one object.

A rule asks the project around a file for declared versions, linked files, the scripts that read a config and the
launch lines that start a script; each answer reads the disk once and is kept here for every later question:

- the directories met (one listing each, pin files read when first asked) and the projects built on them;
- the linked files loaded (a DeepSpeed JSON, an Accelerate YAML, a launcher, a script), by real path;
- who reads a config (project.config_readers): per project root, per folder of scripts, per launch root;
- the launch lines of each project's shell scripts (project.launched);
- the argument class each script's HfArgumentParser parses (project.launch_readers), keyed by the script's stat;
- the accelerator a project exists for (checks._accelerator);

and, in the language server, the editor's view: the text of the files open in it (a linked file or a pin file
open in the editor is read from its buffer, saved or not), and which linked files each check read (to check
the documents that read a file again when it changes). For `check` there are no buffers: the disk is read.

Who owns it: a `check` run makes a fresh one when it starts (precisionlint.run.runner.run_check) and makes it the
current one; its forked workers inherit it, warmed by the first (run.parallel), so each directory is listed once
for all of them. The language server makes one when it starts and keeps it for its life, and tells it what
changed: `forget_file` when one file's content changed, `forget` when files appeared or went away. Code that has
a Project reaches the model through it (`Project.model`); only the entry points (a document's project, a linked
file named by path) ask for the current one. A process that sets none (a test, a benchmark) gets one of its own
on first use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from precisionlint.core.model import Document
    from precisionlint.project import Directory, Project
    from precisionlint.project.reads import LaunchLine, Read


# A directory's path -> its pins signature with the packages its code imports and without (None until asked),
# and whether it is a project's boundary (pins_signature).
Known = dict[str, tuple[str | None, str | None, bool]]

# The text of the linked files kept loaded, in characters, past which the least recently used are let go and
# loaded again if asked for. A launcher, a DeepSpeed JSON or a script that the files around it name stays loaded
# while they are checked (a file's links are asked for again within a few files of it), but a process no longer
# keeps every linked file of the tree: the linked training scripts of four copies of icefall, speechbrain,
# pytorch-image-models and pytorch-lightning held 40 MB of syntax trees in one process, growing with the tree.
# A linked script costs 30 to 55 bytes of memory per character of its text once parsed and read (icefall's
# 44 kB zipformer/train.py: 1.4 MB as loaded), so the window is 64k characters, a few MB: with 256k the workers
# of a check of four copies of those repositories held 14 MB more at their peak (108 -> 94 MB in all), and loading
# the scripts let go again (152 parses of 108 linked files instead of 108) cost no CPU time that could be measured
# (18.1 and 17.8 s, three rounds each; benchmarks/memory_scaling.py's docstring).
LINKED_TEXT_BUDGET = 64 * 1024


class ProjectModel:
    """What one run, or one language server, has learnt of the projects on disk (see the module's docstring)."""

    def __init__(self, open_buffer: Callable[[str], str | None] | None = None, tops: tuple[str, ...] = ()) -> None:
        """`open_buffer(realpath)`: the text an editor holds for a file, None when it is not open (the disk is
        read then); the language server's buffers. None for a run. `tops`: the folders the user named (a run's
        paths, a file's folder for a file; the server's workspace): where a project that declares no boundary
        ends."""
        self.open_buffer = open_buffer
        self.tops = tuple(os.path.abspath(top) for top in tops)
        self._recorders: list[set[str]] = []  # sets collecting the linked files read while active (recording)
        self.directories: dict[str, Directory] = {}  # absolute path -> what the directory declares
        self.projects: dict[str, Project] = {}  # a file's folder -> its project
        # Real path -> the linked file loaded (None: unreadable), least recently used first; LINKED_TEXT_BUDGET.
        self.linked: dict[str, Document | None] = {}
        self._linked_chars = 0  # the text of the documents in `linked`, in characters
        # Who reads a config (project.config_readers): config real path -> its reads, ...
        self.config_reads: dict[str, dict[str, list[Read]]] = {}  # ... by the scripts of a project root
        self.config_reads_near: dict[str, dict[str, list[Read]]] = {}  # ... by the scripts directly in a folder
        self.config_reads_launched: dict[str, dict[str, list[Read]]] = {}  # ... by the launch lines under one
        # a folder -> its Python files that may load a config, for the folders a run's first worker scanned before
        # forking the others (config_readers.scan_ahead): the index reads only those of them
        self.load_scripts: dict[str, frozenset[str]] = {}
        # a script's path -> the paths it resolved through its project (base file, path written, file found) and
        # its reads (config_readers._index): another project whose chain resolves them alike reuses the reads
        self.script_reads: dict[str, tuple[tuple[tuple[str, str, str | None], ...], list[Read]]] = {}
        # project root -> the real path of each script started -> the launch lines that start it
        self.launch_lines: dict[str, dict[str, list[LaunchLine]]] = {}
        # (script real path, modification time, size) -> the argument class its HfArgumentParser takes, or None.
        # Keyed by the script's stat, so an edited script is read afresh without being forgotten.
        self.hf_parses: dict[tuple[str, int, int], str | None] = {}
        # a file's folder (as projects are kept) -> the accelerator its project's packaging files name, read once
        # per project (checks._accelerator)
        self.accelerators: dict[str, str | None] = {}

    # -- the projects ------------------------------------------------------------------------------------------

    def directory(self, path: str) -> Directory:
        found = self.directories.get(path)
        if found is None:
            from precisionlint.project import Directory

            found = self.directories[path] = Directory(path, self)
        return found

    def project_for(self, file_path: str) -> Project:
        """The project of a file (by its path on disk or as displayed, relative to the working directory)."""
        return self.project_of_folder(os.path.dirname(os.path.abspath(file_path)))

    def project_of_folder(self, folder: str) -> Project:
        project = self.projects.get(folder)
        if project is not None:
            return project
        from precisionlint.project import Project

        chain: list[Directory] = []
        current = folder
        for _ in range(64):
            directory = self.directory(current)
            chain.append(directory)
            parent = os.path.dirname(current)
            if directory.boundary or parent == current:
                break
            current = parent
        project = self.projects[folder] = Project(chain, self, self._unbounded_root(chain))
        return project

    def _unbounded_root(self, chain: list[Directory]) -> str | None:
        """Where the scripts, launchers and configs of a project whose chain reaches the top of the file system
        with no boundary (no pyproject.toml, setup.py, setup.cfg or .git above the file) are looked for: the
        highest folder of the chain inside a folder the user named, else the file's own folder. Not the file
        system's root: walking it for scripts read every Python file of the machine up to a limit (seconds
        for one file, and a limit reached in the standard library before the user's own scripts). None: the
        chain ends at a boundary, which is the root."""
        if not chain or chain[-1].boundary:
            return None
        return self.root_of_unbounded([directory.path for directory in chain])

    def root_of_unbounded(self, paths: list[str]) -> str:
        """_unbounded_root of a chain with no boundary, given its folders' paths (the file's folder first)."""
        inside = [path for path in paths
                  if any(path == top or path.startswith(top.rstrip(os.sep) + os.sep) for top in self.tops)]
        return inside[-1] if inside else paths[0]

    def pins_signature(self, folder: str, known: Known | None = None, now_ns: int | None = None) -> str:
        """What the versions of a file in `folder` come from, without the folder itself: the directories of its
        project's chain that declare pins, each with its pin files' names and stat (project.file_signature), and
        up to the project's root those of the in-project packages its code imports (Project._tables). Folders of
        one project that declare nothing of their own share it. `known` keeps, per directory, its signature with
        the imported packages and without (None until asked) and whether it is a boundary: a run keeps that
        (run.context_key) rather than this model's Directory and Project for every folder, so the Directories
        listed here are not kept in the model."""
        from precisionlint.project import Directory

        known = {} if known is None else known
        made: dict[str, Directory] = {}  # listed by this call: not listed twice

        def entry(path: str) -> tuple[str | None, str | None, bool]:
            found = known.get(path)
            if found is None:
                directory = made[path] = self.directories.get(path) or Directory(path, self)
                found = known[path] = (None, None, directory.boundary)
            return found

        chain: list[str] = []
        current = folder
        for _ in range(64):  # as project_of_folder's chain
            chain.append(current)
            parent = os.path.dirname(current)
            if entry(current)[2] or parent == current:
                break
            current = parent
        root = chain[-1] if entry(chain[-1])[2] else self.root_of_unbounded(chain)
        parts = []
        inside_root = True
        for path in chain:
            whole, own, boundary = entry(path)
            signature = whole if inside_root else own
            if signature is None:
                directory = made.get(path) or self.directories.get(path) or Directory(path, self)
                signature = directory.signature(now_ns, with_imported=inside_root)
                known[path] = (signature, own, boundary) if inside_root else (whole, signature, boundary)
            if signature:
                parts.append(f"{path}={signature}")
            inside_root = inside_root and path != root
        return ";".join(parts)

    # -- the editor's view (the language server) ----------------------------------------------------------------

    def buffer_text(self, path: str) -> str | None:
        """The open buffer's text of `path`, or None (not open, or no editor)."""
        if self.open_buffer is None:
            return None
        return self.open_buffer(os.path.realpath(path))

    def note_read(self, path: str) -> None:
        """Called for each linked file a rule reads (found already loaded or not)."""
        if self._recorders:
            real = os.path.realpath(path)
            for reads in self._recorders:
                reads.add(real)

    @contextmanager
    def recording(self) -> Iterator[set[str]]:
        """Collect the real paths of the linked files read inside the block."""
        reads: set[str] = set()
        self._recorders.append(reads)
        try:
            yield reads
        finally:
            self._recorders.remove(reads)

    # -- linked files ------------------------------------------------------------------------------------------

    def load_linked(self, path: str) -> Document | None:
        """A file named by another (a DeepSpeed JSON, an Accelerate config, a script), loaded once; None when
        it cannot be read or parsed (that file's own check reports why)."""
        key = os.path.realpath(path)
        self.note_read(key)
        if key in self.linked:
            found = self.linked[key] = self.linked.pop(key)  # now the most recently used
            return found
        document: Document | None = None
        try:
            from precisionlint.frameworks.documents import load_document
            from precisionlint.sources import Limits, format_of
            from precisionlint.sources.decoding import decode_source

            fmt = format_of(path)
            limits = Limits()
            unsaved = self.buffer_text(key)  # open in an editor: its text, saved or not
            if fmt is not None and unsaved is not None:
                if len(unsaved) <= limits.max_file_size:
                    document = load_document(path, unsaved, fmt, limits)
            elif fmt is not None:
                from precisionlint.core.bounded_read import read_bytes

                data = read_bytes(path, limits.max_file_size)  # a regular file only: never a FIFO or /dev/zero
                document = load_document(path, decode_source(data, path), fmt, limits)
        except Exception:  # unreadable, unparsable, too deep: the link says nothing
            document = None
        self.linked[key] = document
        if document is not None:
            self._linked_chars += len(document.text)
            while self._linked_chars > LINKED_TEXT_BUDGET and len(self.linked) > 1:
                self._drop_linked(next(iter(self.linked)))  # the least recently used
        return document

    def _drop_linked(self, key: str) -> None:
        """Let a linked document go: loaded again if asked for again. Nothing else is undone: whoever still
        holds it keeps a whole document, and the cyclic collector frees what cycles it holds once it is let go."""
        document = self.linked.pop(key, None)
        if document is not None:
            self._linked_chars -= len(document.text)

    def loaded_text(self, path: str) -> str | None:
        """The text a linked file was loaded from (its editor buffer or the disk), while it is still loaded; None
        when it is not. Reads nothing: the language server converts positions in that file with it."""
        document = self.linked.get(os.path.realpath(path))
        return document.text if document is not None else None

    # -- forgetting (a long-lived process: the language server) ------------------------------------------------

    def forget(self) -> None:
        """Drop what was learnt about the file system (files appeared or went away: listings changed). The
        scripts' argument classes stay: they are keyed by each script's stat."""
        self.directories.clear()
        self.projects.clear()
        self.linked.clear()
        self._linked_chars = 0
        self.config_reads.clear()
        self.config_reads_near.clear()
        self.config_reads_launched.clear()
        self.load_scripts.clear()
        self.script_reads.clear()
        self.launch_lines.clear()
        self.accelerators.clear()

    def forget_file(self, path: str, imports: bool = True) -> None:
        """Forget what was learnt from one file whose content changed (on disk or in an editor's buffer): the
        linked document read from it; for a launcher, the launch lines (the scripts it starts read their options
        afresh); for a Python file, the in-project packages the folders above it import (project.vendored; not
        with `imports` False: the caller knows that the file's import lines are as they were); for a pin file,
        the pins of its directory and the projects built on them. Everything else stays warm (a file created or
        deleted changes directory listings: use forget())."""
        self._drop_linked(os.path.realpath(path))
        self._drop_linked(os.path.abspath(path))
        if path.endswith((".sh", ".bash")):
            self.launch_lines.clear()
        folder = os.path.dirname(os.path.abspath(path))
        if path.endswith(".py"):
            self.load_scripts.pop(folder, None)  # it may hold a load word now, or none
            self.script_reads.pop(os.path.realpath(path), None)
            self.script_reads.pop(os.path.abspath(path), None)
        if path.endswith(".py") and imports:
            from precisionlint.project.vendored import DEPTH

            # Its imports may add or drop an in-project package whose pins count for the folders above it.
            self._forget_imports(folder, depth=DEPTH)
        from precisionlint.project import is_pin_file

        if not is_pin_file(os.path.basename(path)):
            return
        directory = self.directories.pop(folder, None)
        if directory is None:
            return
        self._forget_projects(directory)
        self._forget_imports(os.path.dirname(folder), depth=0)  # its pins count for a parent that imports it

    def _forget_imports(self, folder: str, depth: int) -> None:
        """Drop what the directories from `folder` up to `depth` folders above it learnt of their imported
        packages."""
        for _ in range(depth + 1):
            directory = self.directories.get(folder)
            if directory is not None and directory._imported is not None:
                directory._imported = directory._imported_pins = None
                self._forget_projects(directory)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent

    def _forget_projects(self, directory: Directory) -> None:
        for key, project in list(self.projects.items()):
            if directory in project.chain:
                del self.projects[key]
                self.accelerators.pop(key, None)


_CURRENT: list[ProjectModel] = []  # the one this process uses now: set by the run or the server (use)


def current() -> ProjectModel:
    """The project model of this process: the run's or the language server's, else one made on first use."""
    if not _CURRENT:
        _CURRENT.append(ProjectModel())
    return _CURRENT[0]


def use(model: ProjectModel) -> None:
    """Make `model` the one every entry point of the project layer reads from now on."""
    _CURRENT[:] = [model]
