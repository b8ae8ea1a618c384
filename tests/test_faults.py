"""Fault injection: signals at random points of a run, writes that fail part-way, runs that race.

The guarantees under test (README, "What precisionlint guarantees"):
- SIGINT stops a run promptly with exit 130, SIGTERM with 143, one line on stderr and no traceback.
- After an interrupted `--fix`, every file is byte-identical to either its original or its fully fixed form,
  and no temporary file is left.
- No worker process outlives the run, even when the parent is killed with SIGKILL.
- A write that fails part-way (file size limit, read-only directory) loses nothing.
- Concurrent `--fix` runs on one tree end with the correct bytes.

Runs use the real CLI in a subprocess on a tree large enough to start the process pool. The signal times are
drawn from a fixed seed (PRECISIONLINT_FAULT_SEED changes it; PRECISIONLINT_FAULT_RUNS runs more).
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from precisionlint.run.parallel import MIN_BYTES_FOR_POOL

SEED = int(os.environ.get("PRECISIONLINT_FAULT_SEED", "14"))
RUNS = int(os.environ.get("PRECISIONLINT_FAULT_RUNS", "2"))
FILES = 720  # enough that a quiet machine is still checking when the signal lands
PADDING = "# " + "padding to make the tree worth a process pool " * 2 + "\n"

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL") or sys.platform == "win32",
                                reason="POSIX signals")


def _python(index: int) -> str:
    return f"import torch\n{PADDING * 30}with torch.cuda.amp.autocast():\n    y = {index}\n"


def _json(index: int) -> str:
    keys = ", ".join(f'"k{j}": {j}' for j in range(260))
    return f'{{"seed_everything": 1, "trainer": {{"precision": 16, "max_epochs": {index}}}, "other": {{{keys}}}}}\n'


def _toml(index: int) -> str:
    return f"[trainer_config]\nprecision = 16\nmax_epochs = {index}\n{PADDING * 30}"


MAKERS = {".py": _python, ".json": _json, ".toml": _toml}


def make_tree(root: Path) -> dict[str, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    suffixes = list(MAKERS)
    for index in range(FILES):
        suffix = suffixes[index % len(suffixes)]
        name = f"dir{index % 7}/file{index:03}{suffix}"
        data = MAKERS[suffix](index).encode()
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(data)
        files[name] = data
    assert sum(map(len, files.values())) > 1.2 * MIN_BYTES_FOR_POOL  # the pool starts
    return files


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", "--jobs", "2", *args]


def fix_command(*args: str) -> list[str]:
    return command("--fix", "--unsafe-fixes", *args)


def children(pid: int) -> list[int]:
    """The processes descended from `pid` (the pool's workers: the first is its child, and forks the others),
    from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        below = [child for child, parent in parents.items() if parent in frontier]
        found.extend(below)
        frontier = below
    return found


def alive(pid: int) -> bool:
    """Running (a zombie is dead: it only waits for whoever adopted it to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def wait_dead(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [pid for pid in pids if alive(pid)]
        if not left:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


REFERENCE_SECONDS: list[float] = []  # how long an uninterrupted --fix of the tree took here


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The tree's original bytes and its fully fixed bytes (from an uninterrupted --fix run)."""
    root = tmp_path_factory.mktemp("reference")
    original = make_tree(root)
    started = time.monotonic()
    done = subprocess.run(fix_command("."), cwd=root, capture_output=True, text=True, timeout=600)
    REFERENCE_SECONDS.append(time.monotonic() - started)
    assert done.returncode in (0, 1), done.stderr
    fixed = snapshot(root)
    assert set(fixed) == set(original)
    assert sum(fixed[name] != original[name] for name in original) == FILES  # every file has a fix
    return original, fixed


def wait_for_workers(pid: int, seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = children(pid)
        if len(found) >= 2:
            return found
        time.sleep(0.05)
    return children(pid)


def start_and_signal(root: Path, args: list[str], signum: int, delay: float | None
                     ) -> tuple[int, str, list[int], float]:
    """Start a run and signal it after `delay` seconds (None: as soon as its pool is working)."""
    process = subprocess.Popen(command(*args), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True,  # the signal goes to the main process only, as `kill PID`
                               preexec_fn=signals_as_from_a_terminal)
    if delay is None:
        workers = wait_for_workers(process.pid)
        time.sleep(0.2)
    else:
        time.sleep(delay)
        workers = children(process.pid) if Path("/proc").exists() else []
    sent = time.monotonic()
    process.send_signal(signum)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the run did not stop within 60 s of the signal")
    return process.returncode, err.decode(errors="replace"), workers, time.monotonic() - sent


def signals_as_from_a_terminal() -> None:
    """The run's signals as a terminal's shell leaves them. A test run started under `nohup` passes SIGHUP on
    ignored, and precisionlint rightly keeps an ignored SIGHUP ignored: then a SIGHUP test would see no signal."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def check_outcome(code: int, err: str, signum: int) -> None:
    assert "Traceback" not in err, err
    if code in (0, 1):
        return  # the run had finished before the signal
    expected = 128 + signum  # 130, 143, 129 (SIGHUP), 131 (SIGQUIT): as a shell reports a process killed by it
    assert code == expected, (code, err)
    assert err.strip().splitlines()[-1] == ("precisionlint: error: interrupted" if signum == signal.SIGINT
                                             else "precisionlint: error: terminated"), err


@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT],
                         ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"])
def test_signal_during_fix_leaves_every_file_original_or_fixed(
    tmp_path: Path, reference: tuple[dict[str, bytes], dict[str, bytes]], signum: int
) -> None:
    original, fixed = reference
    rng = random.Random(SEED + signum)
    interrupted = 0
    for run in range(RUNS):
        root = tmp_path / f"run{run}"
        make_tree(root)
        # Somewhere in the run, whatever the speed of this machine: from start-up to the last writes.
        delay = rng.uniform(0.05, 0.95) * REFERENCE_SECONDS[0]
        code, err, workers, took = start_and_signal(root, ["--fix", "--unsafe-fixes", "."], signum, delay)
        check_outcome(code, err, signum)
        interrupted += code not in (0, 1)
        after = snapshot(root)
        assert set(after) == set(original), "a file appeared or disappeared (a temporary file left behind?)"
        for name, data in after.items():
            assert data in (original[name], fixed[name]), f"{name} is neither original nor fixed (delay {delay:.2f})"
        assert not wait_dead(workers), f"workers outlived the run (delay {delay:.2f})"
        shutil.rmtree(root)
    assert interrupted, "no run was still going when signalled: the tree is too small to test anything"


@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_during_check_stops_promptly_with_no_worker_left(tmp_path: Path, signum: int) -> None:
    make_tree(tmp_path)
    before = snapshot(tmp_path)
    code, err, workers, took = start_and_signal(tmp_path, ["."], signum, None)
    check_outcome(code, err, signum)
    assert code not in (0, 1), "the run finished before the signal: the tree is too small"
    assert workers, "no pool was running when signalled"
    assert took < 10, f"took {took:.1f} s to stop"
    assert not wait_dead(workers)
    assert snapshot(tmp_path) == before


@needs_proc
def test_second_ctrl_c_never_hangs(tmp_path: Path) -> None:
    make_tree(tmp_path)
    process = subprocess.Popen(command("."), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    workers = wait_for_workers(process.pid)
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert b"Traceback" not in err
    assert not wait_dead(workers)


@needs_proc
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    """SIGKILL (or the OOM killer) on the main process: the workers must not live on holding stdout open,
    which would make `precisionlint check . | wc -c` wait forever."""
    make_tree(tmp_path)
    process = subprocess.Popen(command("."), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    workers = wait_for_workers(process.pid)
    assert workers, "no pool started"
    process.kill()
    process.wait()
    try:
        assert not wait_dead(workers, 10), "workers survived their parent"
        # and the pipe closes: a reader of stdout sees end-of-file
        assert process.stdout is not None
        process.stdout.read()
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_concurrent_fix_runs_end_with_the_fixed_bytes(
    tmp_path: Path, reference: tuple[dict[str, bytes], dict[str, bytes]]
) -> None:
    original, fixed = reference
    make_tree(tmp_path)
    runs = [subprocess.Popen(fix_command("."), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(3)]
    outputs = [run.communicate(timeout=600) for run in runs]
    for run, (_out, err) in zip(runs, outputs, strict=True):
        assert run.returncode in (0, 1), err
        assert b"Traceback" not in err
        assert b"error" not in err, err
    assert snapshot(tmp_path) == fixed
    # every finding was fixed by exactly one of the runs: the reports add up
    counts = []
    for out, _ in outputs:
        line = [ln for ln in out.decode().splitlines() if ln.startswith("Fixed ")]
        counts.append(int(line[0].split()[1]) if line else 0)
    assert sum(counts) == FILES, [o.decode()[-300:] for o, _ in outputs]


def _limited_fix(root: Path, limit: int) -> subprocess.CompletedProcess[str]:
    def limit_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(fix_command("--jobs", "1", "."), cwd=root, capture_output=True, text=True,
                          timeout=300, preexec_fn=limit_size)


def test_a_write_that_fails_part_way_loses_nothing(tmp_path: Path) -> None:
    """RLIMIT_FSIZE lets the new file grow only so far: the write fails in the middle, and the original
    stays whole, with no temporary file left."""
    small = tmp_path / "small.toml"
    big = tmp_path / "big.toml"
    small.write_bytes(b"[trainer_config]\nprecision = 16\n")
    big_bytes = b"[trainer_config]\nprecision = 16\n" + b"# comment line to grow the file\n" * 400
    big.write_bytes(big_bytes)
    done = _limited_fix(tmp_path, 4096)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{big.name}: cannot write the fixed file: File too large" in done.stderr
    assert big.read_bytes() == big_bytes
    assert small.read_bytes() == b'[trainer_config]\nprecision = "16-mixed"\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.toml", "small.toml"]


def test_a_read_only_directory_loses_nothing(tmp_path: Path) -> None:
    """The new file cannot be created beside the original: the run says so and the original stays. Root may
    write in any directory, so as root the directory is made immutable (chattr +i) instead."""
    folder = tmp_path / "locked"
    folder.mkdir()
    config = folder / "train.toml"
    config.write_bytes(b"[trainer_config]\nprecision = 16\n")
    as_root = os.geteuid() == 0
    if as_root:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    try:
        done = subprocess.run(fix_command("."), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)
    assert done.returncode == 2, (done.stdout, done.stderr)
    reason = "Operation not permitted" if as_root else "Permission denied"
    assert f"locked/train.toml: cannot write the fixed file: {reason}" in done.stderr
    assert config.read_bytes() == b"[trainer_config]\nprecision = 16\n"
    assert [p.name for p in folder.iterdir()] == ["train.toml"]
