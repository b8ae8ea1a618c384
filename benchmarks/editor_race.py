"""Editors saving while `check --fix` writes: no save may ever be lost.

    python benchmarks/editor_race.py [--trials 200] [--kind rename|two-write|both] [--trigger time|new-file|both]

Each trial writes a fixable config, starts the real CLI (`check --fix --unsafe-fixes --no-cache`) and, from
this process, saves new content into the file the way an editor does, at one of two moments:

- time: a moment drawn around the instant the fixer replaces the file (calibrated first, so that most saves
  land in the last tens of milliseconds before or after the replacement, where a save can be lost);
- new-file: as soon as the fixer's new file appears beside the original (watched for every 0.2 ms), plus 0 to
  5 ms: the save lands while the fixed content is written, flushed and swapped in, after the fixer read the
  file. This moment does not depend on how busy the machine is, where a drawn time may miss the window on a
  loaded machine (the CLI's start then varies by seconds).

`--trigger both` (the default) alternates them. The save is one of:

- rename: the new content is written to a file beside it and renamed over it (vim's and most IDEs' default);
- two-write: the file is opened, truncated and written in two writes a millisecond apart (nano, `>` in a shell).

After both are done the file must hold the editor's content, either as saved or fixed in its turn (the fixer
read the save and fixed it): anything else, or a half of it, is a lost save. No temporary file may be left.
Prints one line per kind: trials, saves kept as saved, saves fixed in turn, lost saves, and leftovers.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LINES = 2_000  # about 90 kB: writing and flushing the fixed file takes a moment
ORIGINAL = b"[trainer_config]\nprecision = 16\n" + b"# a comment line to give the file some size\n" * LINES


def editor_content(trial: int) -> bytes:
    return (b"[trainer_config]\nprecision = 32\n" + f"# saved by the editor, trial {trial}\n".encode()
            + b"# a comment line to give the file some size\n" * LINES)


def fixed_form(data: bytes) -> bytes:
    return data.replace(b"precision = 32\n", b'precision = "32-true"\n', 1)


def command() -> list[str]:
    return [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", "--fix", "--unsafe-fixes",
            "train.toml"]


def rename_save(path: Path, data: bytes) -> None:
    temporary = path.with_name(".train.toml.editor-swp")
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


def two_write_save(path: Path, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(data[: len(data) // 2])
        handle.flush()
        time.sleep(0.001)
        handle.write(data[len(data) // 2:])


SAVES = {"rename": rename_save, "two-write": two_write_save}


def replaced_at(folder: Path) -> float:
    """Seconds from the start of the CLI to the moment it replaced the file (its inode changed)."""
    path = folder / "train.toml"
    path.write_bytes(ORIGINAL)
    before = os.stat(path).st_ino
    began = time.perf_counter()
    process = subprocess.Popen(command(), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    moment = None
    while process.poll() is None or moment is None:
        try:
            if os.stat(path).st_ino != before:
                moment = time.perf_counter() - began
                break
        except FileNotFoundError:
            pass
        if process.poll() is not None and moment is None:
            break
        time.sleep(0.0005)
    process.wait()
    if moment is None or path.read_bytes() != ORIGINAL.replace(b"precision = 16", b'precision = "16-mixed"'):
        raise SystemExit("calibration: the fixer did not fix the file")
    return moment


def new_file_appears(folder: Path, process: subprocess.Popen[bytes], extra: float) -> None:
    """Wait until the fixer's new file (`.train.toml.*.tmp`) is in the folder, or the fixer has ended, then
    `extra` seconds more."""
    while process.poll() is None:
        if any(name.startswith(".train.toml.") and name.endswith(".tmp") for name in os.listdir(folder)):
            time.sleep(extra)
            return
        time.sleep(0.0002)


def trial(folder: Path, kind: str, index: int, delay: float | None, extra: float = 0.0) -> str:
    """One race; `delay` None: the save waits for the fixer's new file (then `extra` seconds)."""
    path = folder / "train.toml"
    path.write_bytes(ORIGINAL)
    saved = editor_content(index)
    process = subprocess.Popen(command(), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if delay is None:
        new_file_appears(folder, process, extra)
    else:
        time.sleep(max(0.0, delay))
    editor = threading.Thread(target=SAVES[kind], args=(path, saved))
    editor.start()
    editor.join()
    _, err = process.communicate(timeout=120)
    if b"Traceback" in err or b"internal error" in err:
        print(f"trial {index}: the CLI crashed (exit {process.returncode}):\n{err.decode(errors='replace')}",
              flush=True)
        return "crash"
    leftovers = [p.name for p in folder.iterdir() if p.name != "train.toml"]
    if leftovers:
        return "leftover"
    final = path.read_bytes()
    if final == saved:
        return "kept"
    if final == fixed_form(saved):
        return "fixed"
    return "lost"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--kind", choices=["rename", "two-write", "both"], default="both")
    parser.add_argument("--trigger", choices=["time", "new-file", "both"], default="both")
    parser.add_argument("--seed", type=int, default=32)
    arguments = parser.parse_args()
    draw = random.Random(arguments.seed)
    folder = Path(tempfile.mkdtemp(prefix="editor-race-"))
    failures = 0
    try:
        moments = sorted(replaced_at(folder) for _ in range(5))
        moment = moments[len(moments) // 2]
        print(f"the fixer replaces the file {moment * 1000:.0f} ms after it starts (median of 5)")
        kinds = ["rename", "two-write"] if arguments.kind == "both" else [arguments.kind]
        for kind in kinds:
            counts = {"kept": 0, "fixed": 0, "lost": 0, "leftover": 0, "crash": 0}
            triggered = 0
            for index in range(arguments.trials):
                # Most saves within 40 ms before and 10 ms after the replacement; one in five anywhere.
                if draw.random() < 0.8:
                    delay: float | None = moment + draw.uniform(-0.040, 0.010)
                else:
                    delay = draw.uniform(0.0, moment * 1.2)
                extra = draw.uniform(0.0, 0.005)
                if arguments.trigger == "new-file" or (arguments.trigger == "both" and index % 2 == 0):
                    delay = None
                    triggered += 1
                counts[trial(folder, kind, index, delay, extra)] += 1
            bad = counts["lost"] + counts["leftover"] + counts["crash"]
            failures += bad
            print(f"{kind}: {arguments.trials} trials ({triggered} saved when the new file appeared), "
                  f"{counts['kept']} saves kept as saved, {counts['fixed']} "
                  f"fixed in turn, {counts['lost']} lost, {counts['leftover']} leftover files, "
                  f"{counts['crash']} crashes")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
