"""Results kept between runs, so that checking an unchanged tree again does almost nothing.

As ruff does, a result is stored under a key that names everything it depends on:

  settings key   the linter's version and a fingerprint of its own code (so an edited checkout never reads
                 results of older code), the Python version (the `ast` it parses with), the resolved rules
                 (code, name, severity), the target GPUs and the per-file limits. One cache file per settings
                 key: a run with `--select X` keeps its own results and does not push out the full run's.
  entry key      the file's analysis identity (engine.identity.identity_of): a hash of its bytes, its format, its
                 file name and the context key (the hashes of other files and pins its findings depend on).

Only complete results are stored: never a file whose analysis failed inside precisionlint (PL009) or stopped at
a limit (PL003: the CPU-time limit depends on the machine's load). Findings are stored without their path, and
each path that holds the content gets them under its own name, with its own per-file ignores applied later.

The cache lives in `.precisionlint_cache/` at the project root (the `cache-dir` setting or the
PRECISIONLINT_CACHE_DIR environment variable moves it; `--no-cache` turns it off), with a `.gitignore` inside
so that it is never committed, and a CACHEDIR.TAG so that backup tools skip it. It is read as JSON and never
unpickled: a cache directory that came with a cloned repository must not be able to run code.

Unchanged files are not even read. Beside the results, a file index (one per version of precisionlint's code,
as git's index) keeps for each path the `stat` of the file when it was last read (size, modification and change
times in nanoseconds, inode, device) with what its bytes showed: their hash, whether the prefilter let them
through, whether their context key names their folder. A later run that finds the same `stat` takes those from
the index instead of reading, hashing and prefiltering the file again. It is trusted only as far as `stat` can
tell a change:

- the stat is the one of the open descriptor, taken before the bytes are read, so that any write after it
  changes what a later stat sees;
- an entry is recorded only for a file whose modification and change times are older than the run's start by
  more than a timestamp tick (settled(); the "racy git" problem: a file written again within the same tick as
  the read would keep its stat; a file too young is read again by the next run, which records it then);
- the change time (ctime) is compared too: a rewrite that keeps the size and puts the old modification time
  back (os.utime, `cp -p`, `touch -r`) still moves it, and so does a replacement by rename; no program can set
  it. Where the platform has no such time (Windows' st_ctime is the creation time), no index is used;
- a symbolic link is looked up by its own path with the stat of its target, so a link pointed elsewhere is a
  miss. Clocks that disagree (a network file system whose server is behind the client by more than the
  margin) are outside what this can see.

The results of a file whose findings read other files (pins, linked configs) are keyed on those files' stat
in the same way (precisionlint.project.file_signature), and not stored while one of them is too young.

Safe under concurrent runs and a killed process: a cache file is written whole to a temporary file in the same
folder and renamed over the old one (atomic), after merging in what another run stored meanwhile. Its first line
holds a hash of the rest, so a torn or damaged file (a crash before the data reached the disk) is never read;
it is treated as empty. A run that cannot write (a read-only checkout) just checks without a cache.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from precisionlint.core.model import Edit, Finding, Fix, Related, Severity, Span
from precisionlint.core.racy_stat import UNSETTLED, settled

if TYPE_CHECKING:
    from precisionlint.engine.options import EngineOptions
    from precisionlint.engine.results import FileResult

DEFAULT_DIRECTORY = ".precisionlint_cache"
FORMAT_VERSION = "1"  # of the files below; bump when their layout changes
MAGIC = "precisionlint-cache"
KEEP_DAYS = 30  # an entry no run has used for this long is dropped when the file is next written
STALE_SECONDS = 7 * 86_400  # a cache file (another settings key) untouched this long is removed
TEMP_SECONDS = 3_600  # a temporary file this old was left by a killed run
MAX_CACHE_FILE = 1 << 30  # a cache file is read whole; a larger one is damaged, not read

_GITIGNORE = "# Created by precisionlint: this folder is a cache.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by precisionlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def _digest(text: str) -> str:
    from precisionlint.core.digest import content_digest

    return content_digest(text.encode("utf-8", "surrogateescape"))


def code_fingerprint() -> str:
    """The size and modification time of every file of this package: any edit to precisionlint's own
    code or data (a development checkout, an upgrade that keeps the version number) changes it. One scandir per
    folder; well under a millisecond."""
    package = Path(__file__).resolve().parent
    parts: list[str] = []
    stack = [str(package)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__" and not entry.name.startswith("."):
                            stack.append(entry.path)
                    elif not entry.name.endswith((".pyc", ".pyo")):  # code and data tables alike
                        info = entry.stat()
                        parts.append(f"{entry.path}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{folder}:unreadable")
    parts.sort()
    return _digest("\n".join(parts))


def settings_key(options: EngineOptions, fingerprint: str | None = None) -> str:
    from precisionlint import __version__

    rules = sorted((rule.code, rule.name, int(rule.severity), rule.target) for rule in options.rules)
    material = repr((
        FORMAT_VERSION,
        __version__,
        fingerprint if fingerprint is not None else code_fingerprint(),
        sys.version,
        rules,
        tuple(options.gpus),
        tuple(options.limits),
        options.prefilter,
    ))
    return _digest(material)


# ---------------------------------------------------------------------------------------------------------------
# Findings as JSON
# ---------------------------------------------------------------------------------------------------------------


def _encode(finding: Finding) -> list[Any]:
    fix = finding.fix
    encoded_fix = (
        None if fix is None
        else [fix.description, fix.applicability, [[e.start, e.end, e.replacement] for e in fix.edits]]
    )
    row: list[Any] = [finding.code, finding.name, int(finding.severity), *finding.span, finding.message, encoded_fix]
    if finding.related or finding.cell is not None or finding.notes:  # after the fixed fields
        row.append([[r.path, *r.span, r.message] for r in finding.related])
        row.append(finding.cell)
        if finding.notes:
            row.append(list(finding.notes))
    return row


def _decode(row: list[Any], path: str) -> Finding:
    code, name, severity, line, column, end_line, end_column, message, fix = row[:9]
    related = tuple(Related(r[0], Span(*r[1:5]), r[5]) for r in row[9]) if len(row) > 9 else ()
    cell = row[10] if len(row) > 10 else None
    notes = tuple(row[11]) if len(row) > 11 else ()
    return Finding(
        code=code,
        name=name,
        severity=Severity(severity),
        path=path,
        span=Span(line, column, end_line, end_column),
        message=message,
        fix=None if fix is None else Fix(fix[0], fix[1], tuple(Edit(*edit) for edit in fix[2])),
        related=related,
        cell=cell,
        notes=notes,
    )


def _well_typed(finding: Finding) -> bool:
    """Whether a decoded finding holds values of the types every renderer expects: an entry with a valid
    checksum can still hold others (written by another version, or by hand)."""
    span_ok = all(type(n) is int and n >= 0 for n in finding.span)
    texts_ok = all(isinstance(t, str) for t in (finding.code, finding.name, finding.message))
    cell_ok = finding.cell is None or type(finding.cell) is int
    related_ok = all(isinstance(r.path, str) and isinstance(r.message, str)
                     and all(type(n) is int and n >= 0 for n in r.span) for r in finding.related)
    fix = finding.fix
    fix_ok = fix is None or (
        isinstance(fix.description, str) and fix.applicability in ("safe", "unsafe")
        and all(type(e.start) is int and type(e.end) is int and 0 <= e.start <= e.end
                and isinstance(e.replacement, str) for e in fix.edits)
    )
    return span_ok and texts_ok and cell_ok and related_ok and fix_ok


def cacheable(result: FileResult) -> bool:
    """Whether a result is the same whenever the same content is checked with the same settings."""
    if result.internal_error:
        return False
    return not any(f.code in ("PL003", "PL009") for f in result.findings)


# ---------------------------------------------------------------------------------------------------------------
# The cache
# ---------------------------------------------------------------------------------------------------------------


class ResultCache:
    """One run's view of the cache: entries are read once, on the first lookup, and written once, by save()."""

    def __init__(self, directory: Path, options: EngineOptions) -> None:
        self.directory = directory
        self.folder = directory / FORMAT_VERSION
        # Not named .json: a cache folder walked by a check (outside git, in a custom cache-dir) holds no
        # file that precisionlint would read as a config.
        fingerprint = code_fingerprint()
        self.file = self.folder / f"{settings_key(options, fingerprint)}.results"
        self.today = int(time.time() // 86_400)
        # What files' bytes showed, by their stat: shared by every settings key of this code.
        self.files: FileIndex | None = (
            FileIndex(self.folder / f"{fingerprint}.files", self.today) if USES_INDEX else None
        )
        self.entries: dict[str, list[Any]] | None = None  # identity -> [day last used, [finding rows]]
        self.changed = False
        self.hits = 0
        self.misses = 0

    # -- reading -------------------------------------------------------------------------------------------

    def _load(self) -> dict[str, list[Any]]:
        if self.entries is None:
            self.entries = _read(self.file) if _real_folder(self.directory) and _real_folder(self.folder) else {}
        return self.entries

    def get(self, identity: str, display: str) -> FileResult | None:
        from precisionlint.engine.results import FileResult

        entry = self._load().get(identity)
        if entry is None:
            self.misses += 1
            return None
        try:
            findings = [_decode(row, display) for row in entry[1]]
            if not isinstance(entry[0], int) or not all(map(_well_typed, findings)):
                raise TypeError("a value of another type")
        except (TypeError, ValueError, IndexError, KeyError):  # an entry of an unexpected shape: treat it as absent
            self.misses += 1
            return None
        if entry[0] != self.today:
            entry[0] = self.today
            self.changed = True
        self.hits += 1
        return FileResult(display, findings, unread=len(entry) > 2 and bool(entry[2]))

    # -- writing -------------------------------------------------------------------------------------------

    def put(self, identity: str, result: FileResult) -> None:
        if not cacheable(result) or UNSETTLED in identity:
            return
        entry: list[Any] = [self.today, [_encode(f) for f in result.findings]]
        if result.unread:
            entry.append(1)  # a config no framework reads: the summary counts it on a warm run too
        self._load()[identity] = entry
        self.changed = True

    def save(self) -> None:
        """Write the entries (merged with what another run wrote meanwhile) atomically. Never raises for an
        unwritable cache: the run's findings do not depend on it."""
        results = self.changed and self.entries is not None
        files = self.files is not None and self.files.changed and self.files.entries is not None
        if not results and not files:
            return
        created = not self.directory.exists()
        try:
            if results:
                assert self.entries is not None
                self._prepare()
                merged = _read(self.file)
                oldest = self.today - KEEP_DAYS
                for identity, entry in merged.items():
                    if identity not in self.entries and isinstance(entry, list) and entry and _day(entry) >= oldest:
                        self.entries[identity] = entry
                kept = {k: v for k, v in self.entries.items() if _day(v) >= oldest}
                _write_atomic(self.file, kept)
                self.changed = False
            if files:
                assert self.files is not None
                self.files.save(self._prepare)
            self._tidy()
        except OSError:
            if created:  # leave no empty folder behind where nothing could be written
                for folder in (self.folder, self.directory):
                    try:
                        os.rmdir(folder)
                    except OSError:
                        pass

    def _prepare(self) -> None:
        """Create the cache folder with its .gitignore and CACHEDIR.TAG (before anything else goes in). Raises
        OSError, so that nothing is written, where the cache would not be a folder of its own: a symbolic link
        in its place (committed to send the writes and the clean-up elsewhere), or an existing folder with other
        content and no cache tag (its .gitignore of `*` would hide that folder from git)."""
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
        elif not _own_folder(self.directory):
            raise OSError(f"{self.directory}: not a cache folder; not written")
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.directory / name
            if not os.path.lexists(marker):
                _write_text_atomic(marker, text)
        self.folder.mkdir(exist_ok=True)
        if not _real_folder(self.folder):
            raise OSError(f"{self.folder}: a link, not a folder; not written")

    def _tidy(self) -> None:
        """Remove temporary files left by killed runs and cache files of settings no run has used lately: only
        regular files, and only in the cache's own folder (never through a link)."""
        now = time.time()
        if not (_real_folder(self.directory) and _real_folder(self.folder)):
            return
        try:
            with os.scandir(self.folder) as entries:
                for entry in entries:
                    if entry.path == str(self.file):
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    age = now - entry.stat(follow_symlinks=False).st_mtime
                    if entry.path == str(getattr(self.files, "file", "")):
                        continue
                    if (entry.name.endswith(".tmp") and age > TEMP_SECONDS) or (
                        entry.name.endswith((".results", ".files")) and age > STALE_SECONDS
                    ):
                        try:
                            os.unlink(entry.path)
                        except OSError:
                            pass
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------------------------
# The file index: what a file's bytes showed, by the stat of the file (see the module's docstring)
# ---------------------------------------------------------------------------------------------------------------

# Windows reports the creation time as st_ctime, which a rewrite in place does not move.
USES_INDEX = os.name != "nt"

HOLDS = 1  # the prefilter lets the bytes through (engine.prefilter.might_hold_findings)
NAMES_OTHERS = 2  # the context key names the folder (run.context_key.names_other_files)


def stat_key(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """What the index compares: size, modification and change times (ns), inode, device."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class FileIndex:
    """One run's view of the file index: read on the first lookup, written by save() when something changed.
    Entries: absolute path -> [size, mtime ns, ctime ns, inode, device, content hash, flags, day last used]."""

    def __init__(self, file: Path, today: int) -> None:
        self.file = file
        self.today = today
        self.entries: dict[str, list[Any]] | None = None
        self.dropped: set[str] = set()  # entries found stale in this run: not merged back from the disk
        self.changed = False
        self.hits = 0
        self.recorded = 0
        self.started = time.time_ns()  # before any file of the run is read
        self.cwd = os.path.join(os.getcwd(), "")  # with a trailing separator

    def _load(self) -> dict[str, list[Any]]:
        if self.entries is None:
            folders = (self.file.parent, self.file.parent.parent)
            self.entries = _read(self.file) if all(map(_real_folder, folders)) else {}
        return self.entries

    def empty(self) -> bool:
        """Whether no earlier run recorded any file (a first run: every file will be read)."""
        return not self._load()

    def key(self, fs_path: str) -> str:
        # os.path.join's result for POSIX paths (the only ones indexed: USES_INDEX), without its cost per file
        return fs_path if fs_path.startswith("/") else self.cwd + fs_path

    def lookup(self, fs_path: str, info: os.stat_result) -> tuple[str, bool, bool] | None:
        """What the bytes of this file showed when it was read with this very stat: their hash, whether the
        prefilter lets them through, whether their context key names their folder. None when not known."""
        key = self.key(fs_path)
        entries = self.entries if self.entries is not None else self._load()
        entry = entries.get(key)
        if entry is None:
            return None
        try:
            same = (entry[0] == info.st_size and entry[1] == info.st_mtime_ns and entry[2] == info.st_ctime_ns
                    and entry[3] == info.st_ino and entry[4] == info.st_dev and stat.S_ISREG(info.st_mode))
            flags = entry[6]
            known = (entry[5], bool(flags & HOLDS), bool(flags & NAMES_OTHERS)) if same and isinstance(
                entry[5], str) and isinstance(flags, int) else None
        except (TypeError, IndexError):  # an entry of an unexpected shape: treat it as stale
            known = None
        if known is None or len(entry) != 8:
            del entries[key]
            self.dropped.add(key)
            self.changed = True
            return None
        if entry[7] != self.today:
            entry[7] = self.today
            self.changed = True
        self.hits += 1
        return known

    def record(self, fs_path: str, info: os.stat_result, digest: str, holds: bool, names_others: bool) -> None:
        """Remember what the bytes read under this stat showed; `info` must be the stat of the descriptor they
        were read from, taken before reading. A file too young to be told apart from a write in the same tick
        is not recorded."""
        if not stat.S_ISREG(info.st_mode) or not settled(info, self.started):
            return
        key = self.key(fs_path)
        flags = (HOLDS if holds else 0) | (NAMES_OTHERS if names_others else 0)
        self._load()[key] = [*stat_key(info), digest, flags, self.today]
        self.dropped.discard(key)
        self.changed = True
        self.recorded += 1

    def save(self, prepare: Any) -> None:
        """Merge with what another run wrote meanwhile, and write atomically (OSError is the caller's)."""
        if not self.changed or self.entries is None:
            return
        prepare()
        oldest = self.today - KEEP_DAYS
        merged = _read(self.file)
        for key, entry in merged.items():
            if key not in self.entries and key not in self.dropped and isinstance(entry, list) and len(entry) == 8:
                self.entries[key] = entry
        kept = {k: v for k, v in self.entries.items() if _file_day(v) >= oldest}
        _write_atomic(self.file, kept)
        self.changed = False


def _file_day(entry: Any) -> int:
    try:
        return int(entry[7])
    except (TypeError, ValueError, IndexError):
        return -1


def _real_folder(path: Path) -> bool:
    """Whether `path` is a folder itself, not a symbolic link to one (or absent: nothing to follow)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _own_folder(directory: Path) -> bool:
    """Whether an existing folder may hold the cache: a real folder that is empty or already a cache (tagged)."""
    if not _real_folder(directory):
        return False
    if os.path.lexists(directory / "CACHEDIR.TAG"):
        return True
    try:
        with os.scandir(directory) as entries:
            return next(iter(entries), None) is None
    except OSError:
        return False


def _day(entry: Any) -> int:
    try:
        return int(entry[0])
    except (TypeError, ValueError, IndexError):
        return -1


def _read(path: Path) -> dict[str, list[Any]]:
    """The entries of a cache file, or none when it is absent, torn, damaged or of another layout."""
    from precisionlint.core.bounded_read import read_descriptor

    try:  # never through a link, and a regular file only (a FIFO or a device committed in its place)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
        try:
            raw = read_descriptor(fd, MAX_CACHE_FILE)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return {}
    header, newline, body = raw.partition(b"\n")
    if not newline:
        return {}
    fields = header.decode("ascii", "replace").split(" ")
    if len(fields) != 4 or fields[0] != MAGIC or fields[1] != FORMAT_VERSION:
        return {}
    from precisionlint.core.digest import content_digest

    if fields[2] != str(len(body)) or fields[3] != content_digest(body):
        return {}  # torn or damaged: never read
    try:
        entries = json.loads(body)
    except ValueError:
        return {}
    return entries if isinstance(entries, dict) else {}


def _write_atomic(path: Path, entries: dict[str, list[Any]]) -> None:
    from precisionlint.core.digest import content_digest

    body = json.dumps(entries, separators=(",", ":")).encode("ascii")  # \u escapes keep lone surrogates
    header = f"{MAGIC} {FORMAT_VERSION} {len(body)} {content_digest(body)}\n".encode("ascii")
    _replace(path, header + body)


def _write_text_atomic(path: Path, text: str) -> None:
    _replace(path, text.encode("utf-8"))


def _replace(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file next to `path` and rename it over `path`: readers see the old file or
    the new one, never a part of either."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


ENVIRONMENT_VARIABLE = "PRECISIONLINT_CACHE_DIR"


def open_cache(root: Path, cache_dir: str | None, options: EngineOptions) -> ResultCache | None:
    """The cache for a run whose project root is `root`: PRECISIONLINT_CACHE_DIR when set (relative to the
    current folder, as a shell user means it), else the `cache-dir` setting (relative to the root), else
    .precisionlint_cache in the root. None (no cache) where the setting leads outside the project: a cloned
    repository's configuration must not make a run write anywhere else on the machine."""
    from_environment = os.environ.get(ENVIRONMENT_VARIABLE)
    if from_environment:
        return ResultCache(Path(from_environment).absolute(), options)
    if leads_outside(root, cache_dir):
        return None
    return ResultCache(root / (cache_dir if cache_dir else DEFAULT_DIRECTORY), options)


def leads_outside(root: Path, cache_dir: str | None) -> bool:
    """Whether the `cache-dir` setting names a folder outside the project (through `..`, an absolute path or a
    link), which open_cache refuses unless PRECISIONLINT_CACHE_DIR is set."""
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return False
    inside = os.path.realpath(root / (cache_dir if cache_dir else DEFAULT_DIRECTORY))
    return not inside.startswith(os.path.join(os.path.realpath(root), ""))
