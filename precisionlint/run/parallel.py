"""Check many files on every core, with results in the order of the input whatever the scheduling.

Most files of a repository cannot hold a finding, and the prefilter rejects them in microseconds after one
read. So this process reads every file once and applies the prefilter (I/O-bound; a worker would only add
copying), and collects the files that need parsing. They are handed to worker processes (precisionlint.run.fork_pool)
in chunks of about CHUNK_BYTES while the reading goes on. The pool starts when the run is large enough to pay for
it: at once for a tree of EARLY_POOL_FILES files or more (its first worker imports the parsers and rules while
this process reads), otherwise once the files to parse add up to MIN_FILES_FOR_POOL files and MIN_BYTES_FOR_POOL
bytes; below that (a pre-commit run on a few changed files), everything is checked here.

Workers receive the bytes this process read, so that every file is read once and a result is always that of the
content whose hash names it (in the cache, and for the other paths that hold the same content). If a worker dies,
the files it had not finished are checked here instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from precisionlint.core.model import SourceFile
    from precisionlint.engine.options import EngineOptions
    from precisionlint.engine.results import FileResult
    from precisionlint.run.cache import ResultCache
    from precisionlint.run.fork_pool import ForkPool, Spare

# Starting a pool (fork, warm-up, result pickling) costs tens of milliseconds; parsing and checking a file that
# passed the prefilter costs about 1 ms per 10 kB of JSON, 9 ms of Python and 100 ms of YAML (measured with
# benchmarks/run.py's corpus). Below these, one process is faster.
MIN_FILES_FOR_POOL = 2
MIN_BYTES_FOR_POOL = 400_000
CHUNK_BYTES = 96_000  # files are handed to the workers in chunks of about this size, in order
# Once every file is read, the chunks not yet handed out are cut smaller as the work runs out (down to this size),
# so that no worker is left alone with a long chunk at the end.
MIN_CHUNK_BYTES = 8_000
# A tree of this many files starts the pool before reading them: most such trees have work for it (a training
# repository: hundreds of files to parse), and its first worker imports what the checks need meanwhile. A tree
# whose files the prefilter all rejects pays a fork and a killed warm-up on another core.
EARLY_POOL_FILES = 256
# Below this many files (a pre-commit run on the files of one commit), reading them costs less than loading the
# cache's file index of a large repository: the index is neither read nor written.
MIN_FILES_FOR_INDEX = 32

Progress = Callable[[int], None]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Not on Windows (no fork) nor on macOS, where forking a process that has loaded system frameworks can
    crash (which is why Python itself spawns there): those platforms check in one process. (Here rather than
    in fork_pool, whose imports a run that starts no pool, such as a warm one, does not pay.)"""
    import sys

    return hasattr(os, "fork") and sys.platform != "darwin" and _file_size_unlimited()


# The workers get the files' bytes through an anonymous in-memory file that grows to tens of megabytes (the
# arena of fork_pool); a file-size limit (ulimit -f) below this would make writing it fail.
_ARENA_ROOM = 256 << 20


def _file_size_unlimited() -> bool:
    """Whether the file-size limit leaves room for the workers' arena (with `ulimit -f 16384` the run checks
    in one process instead of failing)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return True
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    except (OSError, ValueError):
        return True
    return soft == resource.RLIM_INFINITY or soft >= _ARENA_ROOM


# ---------------------------------------------------------------------------------------------------------------
# The check run
# ---------------------------------------------------------------------------------------------------------------

_WORKER_OPTIONS: Any = None  # set before forking; the workers inherit it


def check_all(
    sources: Sequence[SourceFile],
    options: EngineOptions,
    jobs: int,
    progress: Progress | None = None,
    cache: ResultCache | None = None,
    digests: dict[str, str] | None = None,
    spare: Spare | None = None,
) -> list[FileResult]:
    """Results in the order of `sources` (the files with nothing to report share one result, whose display is
    empty: pair the results with `sources`, not by their display). Each file is read once; a path that leads to
    a file already read (a symbolic or hard link) is not read again, and each distinct content (analysis
    identity) is analysed once, or taken from `cache`: the other paths get a copy of the findings under their
    own name. `digests`, when given, receives the digest of the content each file was analysed in, for the
    files that findings are in (`check --add-noqa` edits a file only if it still holds that content). A pool,
    if one is started, takes `spare` (spare_worker) as its first worker when it can."""
    from precisionlint.core.digest import content_digest
    from precisionlint.core.model import Finding
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.identity import file_name, folder_words, identity_of
    from precisionlint.engine.prefilter import might_hold_findings
    from precisionlint.engine.reading import read_source
    from precisionlint.engine.results import FileResult, release, relocate

    tick = progress or _no_progress
    results: list[FileResult | None] = [None] * len(sources)
    pool: ForkPool | None = None
    poolable = jobs > 1 and can_fork()
    # `files`, the cache's file index: what the bytes of a file with an unchanged stat showed (precisionlint.run.cache).
    files = cache.files if cache is not None and len(sources) >= MIN_FILES_FOR_INDEX else None
    # A large tree starts the pool at once, unless the file index knows it (then most files are unchanged, and
    # the pool starts only if enough of them turn out to need parsing).
    if poolable and len(sources) >= EARLY_POOL_FILES and (files is None or files.empty()):
        pool = _start_pool(sources, options, jobs, spare)
        poolable = pool is not None
    pending: list[tuple[int, int]] = []  # (index, size) of files that need parsing, not yet handed out
    pending_bytes = 0
    data_of: dict[int, bytes] = {}  # the bytes of pending files, until they are handed out
    # (device, inode, name, format, folder words, portable context[, folder]) -> the index that read it
    by_link: dict[tuple[Any, ...], int] = {}
    # device << 64 | inode -> the file read through it and not yet in by_link, as index << 1 | whether its analysis
    # depends on its folder (-1: none; at most one waits, the earlier ones are in by_link): their keys are built
    # when another path leads to the same inode. One int per file of the tree, not a tuple and a list of tuples.
    read_inodes: dict[int, int] = {}
    # Which files can be met through another path (None: any): a file with other names (hard links) or one that
    # a symbolic link of the run leads to. Discovery's files (run.listed) say which are links; the others are
    # not kept in read_inodes (an int each, for every file of the tree).
    shared_inodes = _link_targets(sources)
    context_key = options.context_key
    if context_key is not None or files is not None:  # else no file's key or index entry needs it
        from precisionlint.run.context_key import names_other_files

    def link_key(inode: tuple[int, int], source: SourceFile) -> tuple[Any, ...]:
        portable = context_key.portable(source) if context_key is not None else ""
        return (*inode, file_name(source), source.format, folder_words(source.display), portable)
    # A short digest of each analysis identity -> the index whose analysis it is. Not the identity itself: it holds
    # the context key, a kilobyte or more (the project's pin files with their stat, the folder, the run's configs).
    by_identity: dict[bytes, int] = {}
    analysed: dict[int, str] = {}  # index -> identity, for the files analysed in this run (only to be cached)
    # The result of every file with nothing to report (most of a tree: the prefilter's skips, clean analyses): one
    # shared object each, not one per file (its display is never read: the caller pairs results with `sources`).
    nothing = FileResult("", [])
    skipped = FileResult("", [], skipped=True)
    copies: list[tuple[int, int]] = []  # (index, index whose result it shares)
    read_with: dict[int, tuple[os.stat_result, str, bool, bool]] = {}  # index -> (stat, digest, flags) as read
    digest_of: dict[int, str] = {}  # index -> the digest of the content analysed (only when `digests` is given)
    max_size = options.limits.max_file_size
    for index, source in enumerate(sources):
        info: os.stat_result | None
        if context_key is not None:
            info = context_key.stat(source.fs_path, source.format)  # the one a launcher's key reads too
        else:
            try:
                info = os.stat(source.fs_path)
            except (OSError, ValueError):
                info = None  # read_source reports why
        missed = ""  # the identity the file index gave and the results lacked (not looked up twice)
        if files is not None and info is not None and info.st_size <= max_size:
            known = files.lookup(source.fs_path, info)
            if known is not None:
                known_digest, known_holds, known_names_others = known
                if options.prefilter and not known_holds:
                    results[index] = skipped
                    tick(1)
                    continue
                context = context_key.key(source, known_names_others) if context_key is not None else ""
                identity = identity_of(source, known_digest, context)
                if digests is not None:
                    digest_of[index] = known_digest
                first = by_identity.get(_short(identity))
                if first is not None:
                    copies.append((index, first))
                    continue
                cached = cache.get(identity, source.display)  # type: ignore[union-attr]
                if cached is not None:
                    by_identity[_short(identity)] = index
                    results[index] = _shared(cached, nothing)
                    tick(1)
                    continue
                missed = identity  # analysed with other settings or context: read and analyse it below
        inode = 0
        recordable = False  # whether the file has other names (hard links)
        if info is not None and info.st_ino:
            recordable = info.st_nlink != 1
            # The same file through another path is not read again: a copy of the first result, when its
            # analysis cannot depend on the folder, or when it is in the same folder. The full keys are built
            # only for an inode met twice (a link), not for the thousands of files of a tree met once.
            inode = info.st_dev << 64 | info.st_ino
            waiting = read_inodes.pop(inode, None)
            if waiting is not None:
                if waiting >= 0:
                    earlier = waiting >> 1
                    key = link_key((info.st_dev, info.st_ino), sources[earlier])
                    by_link.setdefault((*key, _folder(sources[earlier])) if waiting & 1 else key, earlier)
                key = link_key((info.st_dev, info.st_ino), source)
                first = by_link.get(key, by_link.get((*key, _folder(source))))
                if first is not None:
                    copies.append((index, first))
                    seen = read_with.get(first)
                    if files is not None and info is not None and seen is not None and _same(seen[0], info):
                        files.record(source.fs_path, info, seen[1], seen[2], seen[3])  # the same file, unchanged
                    continue
                read_inodes[inode] = -1
        opened: list[os.stat_result] = []
        data = read_source(source, options.limits, opened)
        if isinstance(data, Finding):
            results[index] = FileResult(source.display, [data])
            tick(1)
            continue
        holds = might_hold_findings(data, source.format)
        # Whether the context key names the folder: for the key, and for the index (shared with runs that have
        # one). A file the prefilter skips is skipped wherever it is, so in a run without the index its answer
        # is not needed (it is a scan of the whole file).
        names_others = (context_key is not None or files is not None) and (
            holds or files is not None or not options.prefilter) and names_other_files(source.format, data)
        if inode and (shared_inodes is None or inode in shared_inodes or recordable):
            read_inodes[inode] = index << 1 | (names_others and context_key is not None)
        digest = ""
        if files is not None and opened:
            digest = content_digest(data)
            read_with[index] = (opened[0], digest, holds, names_others)
            files.record(source.fs_path, opened[0], digest, holds, names_others)
        if options.prefilter and not holds:
            results[index] = skipped
        else:
            context = context_key.key(source, names_others) if context_key is not None else ""
            digest = digest or content_digest(data)
            identity = identity_of(source, digest, context)
            if digests is not None:
                digest_of[index] = digest
            first = by_identity.setdefault(_short(identity), index)
            if first != index:
                copies.append((index, first))  # a copy of content already seen: analysed once
                continue
            cached = cache.get(identity, source.display) if cache is not None and identity != missed else None
            if cached is not None:
                results[index] = _shared(cached, nothing)
            elif not poolable:  # no pool can be used: check it now, while its bytes are at hand
                if cache is not None:
                    analysed[index] = identity
                result = check_bytes(source.display, data, source.format, options)
                release(result)  # a run keeps findings, not thousands of parsed trees
                results[index] = _shared(result, nothing)
            else:
                if cache is not None:
                    analysed[index] = identity
                pending.append((index, len(data)))
                data_of[index] = data
                pending_bytes += len(data)
                if pool is None and len(pending) >= MIN_FILES_FOR_POOL and pending_bytes >= MIN_BYTES_FOR_POOL:
                    # Enough work to pay for a pool: start it now, while the rest of the files are still read.
                    pool = _start_pool(sources, options, jobs, spare)
                    poolable = pool is not None
                if pool is not None and pending_bytes >= CHUNK_BYTES:
                    for chunk in _split(pending, CHUNK_BYTES):
                        pool.submit([(index, data_of.pop(index, None)) for index, _ in chunk])
                    pending, pending_bytes = [], 0
                continue
        tick(1)

    undone: list[tuple[int, bytes | None]] = [(index, data_of.pop(index, None)) for index, _ in pending]
    if pool is not None:
        pool.submit_rest(undone, MIN_CHUNK_BYTES, CHUNK_BYTES)
        undone = pool.collect(results, tick)  # what a dead worker left undone, if anything
    for index, held in undone:
        results[index] = _shared(_check_one(sources[index], options, held), nothing)
        tick(1)
    if pool is not None:  # the workers send None for a result with nothing to report (_work)
        results = [nothing if result is None else result for result in results]
    for index, first in copies:
        shared = results[first]
        if shared is not nothing and shared is not skipped:
            shared = relocate(shared, sources[index].display)  # type: ignore[arg-type]
        results[index] = shared
        if first in digest_of:
            digest_of[index] = digest_of[first]  # the same content (an identity) or the same file (a link)
        tick(1)
    if digests is not None:  # the files findings are in (a finding may be in another file than its analysis')
        named = {finding.path for result in results for finding in result.findings}  # type: ignore[union-attr]
        for index, digest in digest_of.items():
            if sources[index].display in named:
                digests[sources[index].display] = digest
    if cache is not None:
        for index, identity in analysed.items():
            cache.put(identity, results[index])  # type: ignore[arg-type]
    return results  # type: ignore[return-value]


def _no_progress(count: int) -> None:
    pass


def _link_targets(sources: Sequence[SourceFile]) -> set[int] | None:
    """The files (device << 64 | inode) that the symbolic links among `sources` lead to, when `sources` says
    which are links (run.listed.ListedFiles); None when it cannot say."""
    from precisionlint.run.listed import ListedFiles

    if not isinstance(sources, ListedFiles):
        return None
    found: set[int] = set()
    for index in sources.links:
        try:
            info = os.stat(sources[index].fs_path)
        except (OSError, ValueError):
            continue
        found.add(info.st_dev << 64 | info.st_ino)
    return found


def _short(identity: str) -> bytes:
    """16 bytes that stand for an analysis identity within one run (BLAKE2b, as the content digests)."""
    try:
        from _blake2 import blake2b
    except ModuleNotFoundError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(identity.encode("utf-8", "surrogateescape"), digest_size=16).digest()


def _plain(result: FileResult) -> bool:
    """Whether a result says nothing but that the file was checked: no finding, no flag."""
    return not result.findings and not result.internal_error and not result.unread


def _shared(result: FileResult, nothing: FileResult) -> FileResult:
    return nothing if _plain(result) else result


def _folder(source: SourceFile) -> str:
    return os.path.dirname(os.path.abspath(source.fs_path))


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_size, a.st_mtime_ns, a.st_ctime_ns, a.st_ino, a.st_dev) == (
        b.st_size, b.st_mtime_ns, b.st_ctime_ns, b.st_ino, b.st_dev)


def _split(pending: list[tuple[int, int]], size: int) -> list[list[tuple[int, int]]]:
    """Consecutive runs of about `size` bytes."""
    chunks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    filled = 0
    for item in pending:
        current.append(item)
        filled += item[1]
        if filled >= size:
            chunks.append(current)
            current, filled = [], 0
    if current:
        chunks.append(current)
    return chunks


def _check_one(source: SourceFile, options: EngineOptions, data: bytes | None = None) -> FileResult:
    """Check a file whose bytes `data` the reading loop read and let through the prefilter (check_all hands out
    no other), or, without them, read it and prefilter it first. The bytes are not scanned for the prefilter's
    words again: for the files a worker gets, that was 725 scans of the largest files on the real corpus."""
    from precisionlint.engine.check import check_bytes, check_source
    from precisionlint.engine.results import release

    if data is None:
        result = check_source(source, options)
    else:
        result = check_bytes(source.display, data, source.format, options)
    release(result)  # a run keeps findings, not thousands of parsed trees
    return result


def _work(chunk: list[tuple[int, SourceFile, bytes | None]]) -> list[tuple[int, FileResult | None]]:
    out: list[tuple[int, FileResult | None]] = []
    for index, source, data in chunk:
        result = _check_one(source, _WORKER_OPTIONS, data)  # findings travel back, not parsed trees
        out.append((index, None if _plain(result) else result))  # None: nothing to report (the most common)
    return out


def spare_worker(paths: Sequence[str], jobs: int) -> Spare | None:
    """For a run that names a folder and may use a pool: its first worker, forked now, before the files are found
    (fork_pool.Spare says why). The caller closes it at the end of the run (nothing, if a pool took it).
    Under an address-space limit (`ulimit -v`) no spare is forked: such a limit is met in imports, and a fork
    that fails halfway must not unwind in a child (the pool forks later, where the run handles a failed fork)."""
    from precisionlint.core.memory import address_space_limited

    if jobs <= 1 or not can_fork() or address_space_limited(unknown=True) or not any(
            path != "-" and os.path.isdir(path) for path in paths):
        return None
    from precisionlint.run.fork_pool import Spare

    try:
        return Spare(jobs, _prepare, _work)
    except OSError:  # no fork now: a pool forks its own first worker later, if it can
        return None


def _start_pool(sources: Sequence[SourceFile], options: EngineOptions, jobs: int,
                spare: Spare | None = None) -> ForkPool | None:
    from precisionlint.run.fork_pool import ForkPool

    global _WORKER_OPTIONS
    _WORKER_OPTIONS = options  # the workers fork with it
    setup = _setup(sources, options) if spare is not None else None
    try:
        return ForkPool(sources, jobs, _work, lambda: _warm(sources, options), spare=spare if setup else None,
                        setup=setup, adopt=_text_sharer())
    except OSError:  # no fork (out of processes or memory): this process checks everything
        return None


def _text_sharer() -> Callable[[FileResult], None]:
    """What the pool does with each result a worker sends: its findings take the texts that earlier findings
    hold already (engine.results.share_text), not the fresh copies unpickling made."""
    from precisionlint.engine.results import share_text

    texts: dict[Any, Any] = {}
    return lambda result: share_text(result, texts)


def _setup(sources: Sequence[SourceFile], options: EngineOptions) -> tuple[Any, ...] | None:
    """What a spare first worker needs of the run (its options; what to warm up), or None when the options
    cannot be sent (a rule that is not one of all_rules())."""
    from precisionlint.checks import all_rules

    by_code = {rule.code: rule for rule in all_rules()}
    if any(by_code.get(rule.code) is not rule for rule in options.rules):
        return None
    # The workers need no context key: the keys are this process's (they name the analyses it hands out).
    return ([rule.code for rule in options.rules], options.gpus, options.limits, options.prefilter,
            sorted({source.format for source in sources}), _one_file_per_folder(sources), _configs(sources))


def _prepare(setup: Any) -> Callable[[], None]:
    """In a spare first worker: the run's options from `setup` (_setup), and the warm-up to run."""
    from precisionlint.checks import all_rules
    from precisionlint.engine.options import EngineOptions

    codes, gpus, limits, prefilter, formats, python_files, configs = setup
    by_code = {rule.code: rule for rule in all_rules()}
    global _WORKER_OPTIONS
    _WORKER_OPTIONS = options = EngineOptions([by_code[code] for code in codes], gpus, limits, prefilter)

    def warm() -> None:
        _warm_up(options.rules, set(formats), python_files, configs, limits.max_file_size)
        python_files.clear()  # a path per folder of the tree: the worker lives on, the lists need not
        configs.clear()

    return warm


def _warm(sources: Sequence[SourceFile], options: EngineOptions) -> None:
    _warm_up(options.rules, {source.format for source in sources}, _one_file_per_folder(sources), _configs(sources),
             options.limits.max_file_size)


def _configs(sources: Sequence[SourceFile]) -> list[tuple[str, str]]:
    """The configs of the run (TOML, YAML, JSON) with their format: a worker may look for their readers among
    their projects' scripts (project.config_readers)."""
    return [(source.fs_path, source.format) for source in sources if source.format in ("yaml", "json", "toml")]


# The files whose folders' pins the warm-up reads: the packaging files that make a folder a project's root.
_ROOT_FILES = frozenset({"pyproject.toml", "setup.py", "setup.cfg"})


def _one_file_per_folder(sources: Sequence[SourceFile]) -> list[str]:
    """A file of each folder that holds a project's packaging file (pyproject.toml, setup.py, setup.cfg), the
    folders whose pins the workers would each read (they declare most of a tree's versions). Not every folder:
    each worker would keep the listing and project of every folder of the tree (a 4x tree: 1,640 folders), where
    it needs those of the folders it meets."""
    return list({os.path.dirname(s.fs_path): s.fs_path for s in sources
                 if os.path.basename(s.fs_path) in _ROOT_FILES}.values())


def _warm_up(rules: Sequence[Any], formats: set[str], python_files: list[str], configs: list[tuple[str, str]],
             max_size: int) -> None:
    """In the first worker, before it forks the others: import what checking these files needs (the rules'
    modules, the Python parser's passes, YAML's loader when there are YAML files), so that every worker starts
    with it. `python_files`: a file of each folder whose project's pins to read (_one_file_per_folder);
    `configs`: the run's configs, whose projects' scripts are searched for config loads once for all workers."""
    import importlib

    for rule in rules:
        rule.func  # noqa: B018 - imports the rule's module
    # The modules the passes import when they first need them, which each worker would otherwise import
    # again for itself (pytorch-lightning: 10 ms of each worker's CPU).
    modules = ["precisionlint.frameworks.python_calls", "precisionlint.sources.python_source",
               "precisionlint.engine.suppress", "precisionlint.project.links"]
    if formats & {"python", "notebook"}:
        modules += [f"precisionlint.script.{name}" for name in ("flow", "model", "collect", "fixes", "exits", "tf32")]
        modules.append("precisionlint.project.scripts")
    if "yaml" in formats:
        modules += ["precisionlint.sources.yaml_source", "precisionlint.sources.not_config",
                    "precisionlint.sources.yaml_duplicates", "precisionlint.project.hydra"]
    for module in modules:
        importlib.import_module(module)
    if "yaml" in formats:
        from precisionlint.sources.yaml_check import warm_up

        warm_up()
    # The versions the projects declare, which most Python files' rules ask for: the pin files of each project's
    # root (and the folders up to it) are read once for all workers rather than once in each.
    from precisionlint.project.model import current

    for path in python_files:
        for directory in current().project_for(path).chain:
            directory.pins  # noqa: B018 - reads the pin files
    # Which scripts of the configs' projects may load a config: every worker that checks a config of a project
    # searched all of the project's scripts for a load word (project.config_readers). Only for the configs the
    # prefilter lets through (a config it rejects is not checked, and its readers are never asked for).
    from precisionlint.core.bounded_read import read_bytes
    from precisionlint.engine.prefilter import might_hold_findings

    checked = []
    for path, fmt in configs:
        try:
            if might_hold_findings(read_bytes(path, max_size), fmt):  # type: ignore[arg-type]
                checked.append(path)
        except (OSError, ValueError):
            continue
    if checked:
        from precisionlint.project.config_readers import scan_ahead

        scan_ahead(current(), checked)
