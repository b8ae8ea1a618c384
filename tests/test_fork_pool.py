"""The worker pool: the same results as one process, whatever the sizes of tasks, results and the arena, and no
process left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from precisionlint.checks import all_rules
from precisionlint.core.model import SourceFile
from precisionlint.engine.options import EngineOptions
from precisionlint.run import fork_pool, parallel
from precisionlint.run.parallel import check_all

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="no fork pool on this platform")


def _summary(results) -> list[tuple[str, list[tuple[str, int, int, str]], bool]]:  # type: ignore[no-untyped-def]
    return [(r.display, [(f.code, f.span.line, f.span.column, f.message) for f in r.findings], r.skipped)
            for r in results]


def _descendants() -> list[int]:
    """Processes descended from this one, from /proc (empty where there is no /proc)."""
    if not Path("/proc/self/stat").exists():
        return []
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] not in ("Z", "X"):  # a zombie is dead
                parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [os.getpid()]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def _tree(root: Path, count: int, text: str) -> list[SourceFile]:
    sources = []
    for index in range(count):
        path = root / f"d{index % 9}" / f"f{index:05}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text.format(index=index))
        sources.append(SourceFile(str(path), path.relative_to(root).as_posix(), "python"))
    return sources


# A deprecated autocast, a few findings per file.
SCRIPT = "import torch\nwith torch.cuda.amp.autocast():\n    y{index} = model(x)\ny{index}.sum().backward()\n"


def test_tasks_and_results_larger_than_a_pipe_neither_block_nor_lose_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of small files in one chunk: a task larger than a pipe holds (64 kB), written as the worker
    reads it, and results larger than that, which the worker writes while this process reads them."""
    sources = _tree(tmp_path, 3000, SCRIPT)
    monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 10_000_000)  # everything read goes out in one chunk
    options = EngineOptions(rules=all_rules())
    pooled = check_all(sources, options, jobs=2)
    serial = check_all(sources, options, jobs=1)
    assert _summary(pooled) == _summary(serial)
    assert sum(len(r.findings) for r in pooled) >= 3000
    assert not _descendants()


def test_the_arena_reuses_its_start_without_overwriting_work_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = _tree(tmp_path, 400, SCRIPT + "# {index}" * 40 + "\n")
    monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 2_000)
    monkeypatch.setattr(fork_pool._Arena, "REUSE_FROM", 10_000)  # reused from the start every few chunks
    options = EngineOptions(rules=all_rules())
    assert _summary(check_all(sources, options, jobs=3)) == _summary(check_all(sources, options, jobs=1))


def test_arena_ranges_in_use_never_overlap() -> None:
    arena = fork_pool._Arena()
    arena.REUSE_FROM = 100  # type: ignore[misc]
    try:
        live: dict[int, tuple[int, int]] = {}
        for number in range(1, 200):
            data = [bytes([number % 251]) * (7 + number % 40), None, b"x" * (number % 5)]
            where = arena.put(number, data)
            start = min(place[0] for place in where if place is not None)
            end = max(place[0] + place[1] for place in where if place is not None)
            assert all(end <= low or start >= high for low, high in live.values()), number
            live[number] = (start, end)
            for value, place in zip(data, where, strict=True):
                assert (place is None) == (value is None)
                if place is not None:
                    assert os.pread(arena.fd, place[1], place[0]) == value
            if number % 3:  # some chunks finish, others stay in flight
                finished = min(live)
                arena.done(finished)
                del live[finished]
        assert arena.end < 2_000  # the start was reused
    finally:
        arena.close()


def test_a_large_tree_starts_the_pool_before_reading_and_gets_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = _tree(tmp_path, 60, SCRIPT)
    started: list[int] = []
    real = parallel._start_pool

    def start(*args):  # type: ignore[no-untyped-def]
        started.append(len(args[0]))
        return real(*args)

    monkeypatch.setattr(parallel, "EARLY_POOL_FILES", 50)
    monkeypatch.setattr(parallel, "_start_pool", start)
    options = EngineOptions(rules=all_rules())
    assert _summary(check_all(sources, options, jobs=2)) == _summary(check_all(sources, options, jobs=1))
    assert started == [60]
    assert not _descendants()


def test_a_pool_that_gets_no_work_is_ended_and_leaves_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large tree whose files the prefilter all rejects: the pool started before reading is killed, even while
    its first worker is still importing."""
    sources = _tree(tmp_path, 60, "x{index} = 1\n")
    monkeypatch.setattr(parallel, "EARLY_POOL_FILES", 50)
    results = check_all(sources, EngineOptions(rules=all_rules()), jobs=4)
    assert all(r.skipped for r in results)
    assert not _descendants()


def test_largest_files_are_handed_out_first_once_all_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files left when the reading ends go out largest first, in chunks that shrink, so that the workers
    finish together rather than one of them alone with the last long file."""
    handed: list[int] = []  # file sizes, in the order they are handed out
    real = fork_pool._Arena.put

    def put(self, number, data):  # type: ignore[no-untyped-def]
        handed.extend(len(d) for d in data if d is not None)
        return real(self, number, data)

    sizes = [100, 5_000, 300, 9_000, 2_000, 50, 7_000, 800, 20_000, 1_000]
    sources = []
    for index, size in enumerate(sizes):
        path = tmp_path / f"f{index}.py"
        path.write_text("import torch\nscaler = torch.amp.GradScaler()\n" + "#" * size + "\n")
        sources.append(SourceFile(str(path), path.name, "python"))
    monkeypatch.setattr(fork_pool._Arena, "put", put)
    monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 10**9)  # nothing goes out while the files are read
    options = EngineOptions(rules=all_rules())
    assert _summary(check_all(sources, options, jobs=2)) == _summary(check_all(sources, options, jobs=1))
    assert len(handed) == len(sizes)
    assert handed == sorted(handed, reverse=True)


def test_reading_waits_for_the_workers_so_queued_bytes_stay_within_a_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent reads no further ahead of the workers than a window of bytes: a tree many times the window
    never has more than the window (and the chunk that crossed it) queued, and the results are those of one
    process."""
    sources = _tree(tmp_path, 600, SCRIPT + "# {index}" * 150 + "\n")
    monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 2_000)
    monkeypatch.setattr(fork_pool, "WINDOW_BYTES", 10_000, raising=False)
    queued: list[int] = []
    submit = fork_pool.ForkPool.submit

    def watched(self: fork_pool.ForkPool, files: list[tuple[int, bytes | None]]) -> None:
        submit(self, files)
        queued.append(sum(len(data or b"") for _, chunk in self.queue for _, data in chunk))

    monkeypatch.setattr(fork_pool.ForkPool, "submit", watched)
    options = EngineOptions(rules=all_rules())
    pooled = check_all(sources, options, jobs=2)
    total = sum(os.path.getsize(source.fs_path) for source in sources)
    assert total > 40 * 10_000
    assert len(queued) > 100
    assert max(queued) <= 10_000 + 4_000
    assert _summary(pooled) == _summary(check_all(sources, options, jobs=1))
    assert not _descendants()


def _freeze_count(chunk: list[tuple[int, SourceFile, bytes | None]]) -> list[tuple[int, int]]:
    import gc

    return [(index, gc.get_freeze_count()) for index, _, _ in chunk]


def test_workers_start_with_what_they_inherit_frozen(tmp_path: Path) -> None:
    """A worker's garbage collections leave what it inherited alone (frozen before the fork), so that they do not
    copy the pages of the parent's per-file lists into every worker; the parent collects as before."""
    import gc

    sources = _tree(tmp_path, 4, SCRIPT)
    pool = fork_pool.ForkPool(sources, 2, _freeze_count, lambda: None)  # type: ignore[arg-type]
    try:
        assert gc.get_freeze_count() == 0
        for index in range(len(sources)):
            pool.submit([(index, b"x")])
        results: list[object] = [None] * len(sources)
        assert pool.collect(results, lambda count: None) == []  # type: ignore[arg-type]
    except BaseException:
        pool.stop()
        raise
    assert all(isinstance(count, int) and count > 1000 for count in results), results
    assert not _descendants()


def test_a_folder_named_by_its_path_keeps_one_string_per_file(tmp_path: Path) -> None:
    """Where the path read, the name shown and the real path are spelled alike (a folder named by its absolute
    path), each file's SourceFile holds one string for them: a run keeps one SourceFile per file of the tree."""
    from precisionlint.run.discover import discover

    _tree(tmp_path, 12, SCRIPT)
    found = discover([str(tmp_path)], tmp_path).files
    assert len(found) == 12
    assert all(source.display == source.fs_path for source in found)
    assert all(source.display is source.fs_path for source in found)


def _run(root: Path, jobs: int) -> list[tuple[str, int, int, str]]:
    from precisionlint.run.config import load_config
    from precisionlint.run.runner import RunRequest, run_check

    request = RunRequest(paths=[str(root)], config=load_config(None, root), rules=all_rules(), jobs=jobs,
                         progress=False)
    return [(f.path, f.span.line, f.span.column, f.code) for f in run_check(request).findings]


def test_a_folders_first_worker_forks_before_its_files_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Then neither it nor the workers it forks hold the tree's file list (or what finding it left): their memory
    does not grow with the tree. A spare no pool takes (a folder of a few files) ends with the run."""
    from precisionlint.run import discover as discovery

    for name, count in (("big", 60), ("small", 3)):
        (tmp_path / name).mkdir()
        _tree(tmp_path / name, count, SCRIPT)
    monkeypatch.setattr(parallel, "EARLY_POOL_FILES", 50)
    processes_at_discovery: list[int] = []
    real = discovery.discover

    def discover(*args, **kwargs):  # type: ignore[no-untyped-def]
        processes_at_discovery.append(len(_descendants()))
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "discover", discover)
    alone = _run(tmp_path / "big", 1)
    assert alone
    assert _run(tmp_path / "big", 2) == alone
    assert not _descendants()
    assert _run(tmp_path / "small", 2)
    assert not _descendants()
    assert processes_at_discovery == [0, 1, 1]


def test_a_worker_gives_back_its_heaps_free_pages_after_each_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """What an analysis freed goes back to the system after each chunk (glibc's malloc_trim), rather than each
    worker keeping to the end of the run the most its largest analyses needed at once."""
    import pickle
    import platform
    import sys

    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert fork_pool._trimmer() is not None
    calls: list[int] = []
    monkeypatch.setattr(fork_pool, "_trimmer", lambda: calls.append)
    task_read, task_write = os.pipe()
    out_read, out_write = os.pipe()
    arena = fork_pool._Arena()
    try:
        for number in (1, 2, 3):
            payload = pickle.dumps((number, []))
            os.write(task_write, len(payload).to_bytes(8, "little") + payload)
        os.close(task_write)
        fork_pool._serve(task_read, out_write, arena.fd, lambda chunk: [])
        assert calls == [0, 0, 0]
    finally:
        arena.close()
        for fd in (task_read, out_read, out_write):
            os.close(fd)


def test_the_warm_up_reads_the_projects_pins_without_keeping_every_folder(tmp_path: Path) -> None:
    """The first worker reads the pins of the folders that hold a project's packaging files before it forks the
    others; it does not list every folder of the tree, which every worker would then keep to the end."""
    names = ["pyproject.toml", "setup.py", "train.py", "a/x.py", "b/y.py", "b/c/z.py", "b/c/conf.yaml"]
    sources = []
    for name in names:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
        fmt = "toml" if name.endswith(".toml") else "yaml" if name.endswith(".yaml") else "python"
        sources.append(SourceFile(str(path), name, fmt))  # type: ignore[arg-type]
    warmed = parallel._one_file_per_folder(sources)
    assert len(warmed) == 1 and os.path.dirname(warmed[0]) == str(tmp_path)


def test_a_heavy_chunk_waits_while_another_worker_is_on_one_and_the_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers each analysing a large file at once take twice the memory of one: a chunk holding a file whose
    analysis is estimated heavy goes to a worker only while no other worker holds one, and the other chunks go to
    the other worker meanwhile."""
    import time

    monkeypatch.setattr(fork_pool, "HEAVY_BYTES", 1 << 20, raising=False)  # as a 4 MB notebook's is heavy

    log = tmp_path / "log"
    log.mkdir()

    def work(chunk: list[tuple[int, SourceFile, bytes | None]]) -> list[tuple[int, object]]:
        for index, _, data in chunk:
            start = time.monotonic()  # one clock for every process of the machine
            heavy = data is not None and len(data) > 100_000
            # A light analysis takes a little time too: done at once, the second worker (forked ready by the
            # first) could finish every light file before the first worker even started its heavy one.
            time.sleep(0.3 if heavy else 0.05)
            with open(log / str(os.getpid()), "a") as handle:
                handle.write(f"{index} {int(heavy)} {start} {time.monotonic()}\n")
        return [(index, None) for index, _, _ in chunk]

    heavy = b"{" + b" " * 400_000 + b"}"  # a 400 kB notebook: its analysis is estimated at 1.6 MB
    sizes = [heavy, heavy, b"{}", b"{}", heavy, b"{}", b"{}", heavy, b"{}", b"{}"]
    sources = [SourceFile(str(tmp_path / f"n{index}.ipynb"), f"n{index}.ipynb", "notebook")
               for index in range(len(sizes))]
    pool = fork_pool.ForkPool(sources, 2, work, lambda: None)  # type: ignore[arg-type]
    try:
        for index, data in enumerate(sizes):
            pool.submit([(index, data)])
        results: list[object] = [None] * len(sources)
        assert pool.collect(results, lambda count: None) == []  # type: ignore[arg-type]
    except BaseException:
        pool.stop()
        raise
    runs = {int(pid.name): [tuple(float(x) for x in line.split()) for line in pid.read_text().splitlines()]
            for pid in log.iterdir()}
    assert sorted(int(index) for rows in runs.values() for index, *_ in rows) == list(range(len(sizes)))
    assert len(runs) == 2
    for pid, rows in runs.items():
        for other, other_rows in runs.items():
            if other == pid:
                continue
            for _, heavy_a, start_a, end_a in rows:
                for _, heavy_b, start_b, end_b in other_rows:
                    if heavy_a and heavy_b:
                        assert end_a <= start_b or end_b <= start_a, "two heavy analyses at once"
    # the light files were not held back behind the heavy ones: some ran beside a heavy analysis
    assert any(heavy_a and not heavy_b and start_a <= start_b <= end_a
               for pid, rows in runs.items() for other, other_rows in runs.items() if other != pid
               for _, heavy_a, start_a, end_a in rows for _, heavy_b, start_b, _ in other_rows)
    assert not _descendants()
