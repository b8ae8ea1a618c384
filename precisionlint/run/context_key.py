"""A run's context key for project-aware rules: what a file's findings depend on outside its own bytes.

The engine analyses identical content once and the cache reuses results by content; a rule that reads pins or
linked files makes a file's findings depend on its project's pin files and, where it names other files, on its
folder (links resolve from it) and on the files it names. The key names exactly that:

- every file: the pin files of its project (the directories of its chain that declare any, with the names and
  stat of their pin files: precisionlint.project.file_signature), not its folder, so that the same script in
  two folders of one project (icefall's recipes are symbolic links to shared files) is analysed once;
- a file that can name another file: also its folder and the stat of every config and launcher of the run,
  computed once, so that a changed DeepSpeed JSON is never answered from the cache. That is every config,
  launcher and notebook, and a script whose text says `deepspeed` in any case, or `initialize` and `autocast`
  with a `ds` or `DeepSpeed` alias (the rules that follow a script's links look no further without them), and a
  script that declares command-line options (its launch lines pass them: values.launched). A
  launcher also reads the scripts it starts, and a config's reader is the script that loads it
  (project.config_readers), so their keys name every Python file and notebook of the run as well (a script's
  own key does not: an edited script leaves the cached results of the other scripts valid).

Without a project-aware or settings rule selected there is no key, and nothing here runs.
"""

from __future__ import annotations

import os
import re
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from precisionlint.checks import Rule
    from precisionlint.core.model import SourceFile
    from precisionlint.project.model import Known

_LINKABLE = ("json", "yaml", "toml", "shell")
_SCRIPTS = ("python", "notebook")


class ProjectContext:
    """The context key of each file of one run (see the module's docstring)."""

    def __init__(self, sources: Sequence[SourceFile]) -> None:
        from precisionlint.project.model import current

        self.sources = sources
        self._model = current()  # the run's project model (run.runner.run_check made it)
        self._pins_of_folder: dict[str, str] = {}
        self._shared: dict[str, str] = {}  # one string for the folders that share a signature (about 1 kB each)
        self._signatures: dict[str, str] = {}
        # directory -> the signatures of its pin files and whether it is a project's boundary, for this run
        # (ProjectModel.pins_signature): what the keys need of each folder, rather than the project model's
        # Directory and Project for each (listing, chain, caches), which this process would otherwise keep for
        # every folder of the tree
        self._directories: Known = {}
        self._started = time.time_ns()  # before any file of the run is read
        # The stat of each file of the run, taken once: the engine's loop stats every file before reading it,
        # and a launcher's key needs the stat of every script of the run (icefall: 1,358 of them). Kept packed
        # (_pack: the six fields the run reads, 77 bytes) rather than as os.stat_result objects (about 600 bytes
        # each with their numbers): a run holds one per file of the tree.
        self._stats: dict[str, bytes | os.stat_result] = {}
        # The stats a signature took of files the loop has not reached yet (a launcher or config met early needs
        # every script's and config's), by position in `sources` rather than by path: the paths of a walked tree
        # are made when asked for (run.listed), so that a path kept as a key would be one string per file. The
        # loop asks in the order of `sources` (_cursor follows it); asked otherwise, the positions are looked up
        # by path (_positions, made then).
        self._ahead: dict[int, bytes | os.stat_result] = {}
        # The most entries _ahead has held since its table was last made: a dict keeps its table as entries are
        # taken out, so it is copied into a smaller one each time the loop has taken half of them (a 4x tree's
        # scripts and configs: a 295 kB table, kept to the end of the reading otherwise).
        self._ahead_most = 0
        self._cursor = 0
        self._positions: dict[str, int] | None = None

    def stat(self, fs_path: str, fmt: str | None = None) -> os.stat_result | None:
        """os.stat of a file of this run (None when it cannot be had), the same answer for the run's loop and its
        keys. Taken when first asked, within the run: a key built from it is as fresh as one built from a
        stat of its own. Only size, mode, inode, device, the modification and change times (ns) and whether the
        file has other names (st_nlink 2 for more than one, else 1) are kept: the others read 0 (nothing of the
        run reads them). `fmt`, the file's format, when the run's loop asks
        (once per file): the stat is not kept beyond this call unless a signature still to be built needs it."""
        if fmt is not None and not self._needed(fmt):
            kept = self._stats.pop(fs_path, None)
            position = self._position(fs_path)
            if position is not None:
                ahead = self._ahead.pop(position, None)
                kept = ahead if kept is None else kept
                if ahead is not None and 2 * len(self._ahead) < self._ahead_most:
                    self._ahead = dict(self._ahead)
                    self._ahead_most = len(self._ahead)
        else:
            if fmt is not None:
                self._position(fs_path)  # the loop's place, followed
            kept = self._stats.get(fs_path)
        if kept is not None:
            return _unpack(kept)
        packed, info = _stat_packed(fs_path)
        if fmt is None or self._needed(fmt):
            self._stats[fs_path] = packed
        return info

    def _position(self, fs_path: str) -> int | None:
        """The position in `sources` of the file the loop asks for (once per file, in their order)."""
        if self._positions is None:
            if self._cursor < len(self.sources) and self.sources[self._cursor].fs_path == fs_path:
                self._cursor += 1
                return self._cursor - 1
            self._positions = {}  # not asked in order: by path from now on
            self._place(self._ahead)
        return self._positions.get(fs_path)

    def _place(self, positions: Iterable[int]) -> None:
        if self._positions is not None:
            for at in positions:
                self._positions[self.sources[at].fs_path] = at

    def _stat_at(self, position: int, fs_path: str) -> os.stat_result | None:
        """A signature's stat of the file at `position` of `sources`: the one the loop took, if it has, else
        taken now and kept for the loop (_ahead)."""
        kept = self._stats.get(fs_path)
        if kept is None:
            kept = self._ahead.get(position)
        if kept is not None:
            return _unpack(kept)
        packed, info = _stat_packed(fs_path)
        self._ahead[position] = packed
        self._ahead_most = max(self._ahead_most, len(self._ahead))
        return info

    def _needed(self, fmt: str) -> bool:
        """Whether a signature not yet built reads the stat of a file of this format."""
        return (fmt in _LINKABLE and "configs" not in self._signatures) or (
            fmt in _SCRIPTS and "scripts" not in self._signatures)

    def portable(self, source: SourceFile) -> str:
        """The part of the key that does not depend on the file's own folder: its project's pins."""
        # Looked up by the folder as the path spells it (one run has one working directory): no abspath per file.
        spelled = os.path.dirname(source.fs_path)
        found = self._pins_of_folder.get(spelled)
        if found is None:
            folder = os.path.dirname(os.path.abspath(source.fs_path))
            if folder == spelled:
                folder = spelled  # one string for the folder in both tables (a run that named absolute paths)
            # what this run keeps of each directory (_directories), not the model's Directory and Project
            found = self._model.pins_signature(folder, self._directories, self._started)
            found = self._pins_of_folder[spelled] = self._shared.setdefault(found, found)
        return found

    def reads_folder(self, source: SourceFile, data: bytes) -> bool:
        return names_other_files(source.format, data)

    def key(self, source: SourceFile, reads_folder: bool) -> str:
        """The key of a content at this path, given what names_other_files said of it."""
        key = self.portable(source)
        if not reads_folder:
            return key
        folder = os.path.dirname(os.path.abspath(source.fs_path))
        key = f"{key}|{folder}|{self._signature('configs', _LINKABLE)}"
        if source.format in ("shell", "json", "yaml", "toml"):  # a config's reader is the script that loads it
            key += f"|{self._signature('scripts', _SCRIPTS)}"
        return key

    def _signature(self, name: str, formats: tuple[str, ...]) -> str:
        found = self._signatures.get(name)
        if found is None:
            before = len(self._ahead)
            found = self._signatures[name] = _signature(self.sources, formats, self._started, self._stat_at)
            if self._positions is not None and len(self._ahead) != before:
                self._place(self._ahead)
        return found


_PACKED = struct.Struct("<QQqqQI")  # size, inode, mtime ns, ctime ns, device, mode (and _LINKED)
# In the packed mode's top bit (above any mode's bits): the file has more than one name (st_nlink > 1). The run
# asks only that of the link count (run.parallel: whether a path can lead to a file met through another), so
# it is read back as 2 for more than one, else 1.
_LINKED = 1 << 31


def _pack(info: os.stat_result) -> bytes | os.stat_result:
    if info.st_mode & _LINKED:
        return info  # no room for the flag: kept whole
    try:
        return _PACKED.pack(info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_dev,
                            info.st_mode | (_LINKED if info.st_nlink != 1 else 0))
    except struct.error:  # a field out of range (a file system with odd numbers): kept whole
        return info


def _unpack(kept: bytes | os.stat_result) -> os.stat_result | None:
    if not isinstance(kept, bytes):
        return kept
    if not kept:
        return None  # the stat failed
    size, inode, mtime_ns, ctime_ns, device, mode = _PACKED.unpack(kept)
    links = 2 if mode & _LINKED else 1
    return os.stat_result((mode & ~_LINKED, inode, device, links, 0, 0, size, 0, 0, 0, 0.0, 0.0, 0.0, 0, mtime_ns,
                           ctime_ns))


def _stat_packed(fs_path: str) -> tuple[bytes | os.stat_result, os.stat_result | None]:
    """os.stat of a file as the run keeps it (_pack; b"": the stat failed), and the stat itself (None)."""
    try:
        info = os.stat(fs_path)
    except (OSError, ValueError):
        return b"", None
    return _pack(info), info


def names_other_files(fmt: str, data: bytes) -> bool:
    """Whether the findings of this content can depend on files it names (resolved from its folder). The
    rules look for those words in the decoded text, which holds them exactly when the UTF-8 bytes do; a
    script with a coding declaration (another encoding) counts, too. A function of the bytes and the format
    alone: the cache's file index keeps its answer."""
    if fmt != "python":
        return True
    if b"coding" in data[:1024] or b"deepspeed" in data.lower():
        return True
    if b"from_pretrained" in data:
        return True  # fp16-on-bf16-checkpoint: a local checkpoint's config.json
    if (b"add_argument" in data or b"click" in data or b"HfArgumentParser" in data) and (
            b"16" in data or b"precision" in data or b"fp8" in data):
        return True  # an option's value: the project's launch lines that start the script (values.launched)
    # autocast-around-deepspeed-engine: `deepspeed.initialize(config=...)` through an alias (`ds`), in a
    # file with both words; a name that is not ASCII may be normalised to one by the parser.
    if b"initialize" not in data or b"autocast" not in data:
        return False
    if not data.isascii():
        return True
    from precisionlint.project.links import DEEPSPEED_WORDS  # the names is_deepspeed accepts (a heavy import)

    return re.search(DEEPSPEED_WORDS.encode(), data) is not None


def context_function(sources: Sequence[SourceFile], rules: Sequence[Rule]) -> ProjectContext | None:
    # Every settings rule too: a config's settings follow the scripts that load it (project.config_readers).
    if not any(rule.needs_project or rule.target == "settings" for rule in rules):
        return None
    return ProjectContext(sources)


def _signature(
    sources: Sequence[SourceFile], formats: tuple[str, ...], now_ns: int,
    stat: Callable[[int, str], os.stat_result | None],
) -> str:
    """The digest of `path:stat signature` for every file of these formats, one a line, fed to the hash line by
    line: the text of a tree's thousands of scripts is never made (with its list of lines and its bytes, three
    copies of it at once: 7 MB for 8,000 files), since the process that reads the files peaks when it is built."""
    try:
        from _blake2 import blake2b
    except ModuleNotFoundError:  # pragma: no cover - as core.digest.content_digest
        from hashlib import blake2b
    from precisionlint.core.racy_stat import UNSETTLED
    from precisionlint.project import stat_signature

    digest = blake2b(digest_size=16)  # content_digest's hash, of the same bytes: "\n".join(lines) encoded
    unsettled = False
    first = True
    for position, source in enumerate(sources):
        if source.format in formats:
            info = stat(position, source.fs_path)
            if info is not None:
                line = f"{source.fs_path}:{stat_signature(info, now_ns)}"
                unsettled = unsettled or UNSETTLED in line
                digest.update(line.encode("utf-8", "surrogateescape") if first else
                              b"\n" + line.encode("utf-8", "surrogateescape"))
                first = False
    found = digest.hexdigest()
    return found + UNSETTLED if unsettled else found
