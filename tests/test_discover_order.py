"""The walk yields a tree's files in the order sorted() gives their paths, without a list of them all: names that
sort around a folder's name ("a-b", "a.py", "a b", "a0", a name with an accent) are placed exactly where sorting
the whole paths places them, and `check --show-files` lists them in that order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from precisionlint.run.discover import _walk

ROOT = Path(__file__).resolve().parent.parent

# Names around the folder "a": characters that sort before "/" (" ", "!", "-", ".") and after it ("0", "_", "b"),
# a folder inside a folder of the same name, capitals, a hidden folder, a name that is not ASCII and a file of
# no format that is checked ("c/a").
PATHS = [
    "a/b.py", "a/a/a.py", "a/a.py", "a/ab/c.py", "a.py", "a-b/x.py", "a b/y.py", "a0/z.py", "a_/w.py", "ab.py",
    "c/a", "b/a/b/c.py", "b.py", "B/c.py", "é/a.py", "e/a.py", "z.py", ".hidden/h.py", "a!/q.py",
]


def _make(root: Path) -> None:
    for path in PATHS:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x = 1\n")


def test_walk_yields_the_sorted_order_of_the_paths(tmp_path: Path) -> None:
    _make(tmp_path)
    walked = list(_walk(tmp_path))
    assert walked == sorted(walked)
    expected = sorted(os.path.relpath(os.path.join(folder, name), tmp_path).replace(os.sep, "/")
                      for folder, _dirs, names in os.walk(tmp_path) for name in names)
    assert walked == expected


def test_walk_notes_unreadable_and_left_out_folders_as_it_meets_them(tmp_path: Path) -> None:
    _make(tmp_path)
    (tmp_path / "node_modules" / "x").mkdir(parents=True)  # left out by default
    (tmp_path / "node_modules" / "x" / "a.py").write_text("x = 1\n")
    excluded: list[tuple[str, str]] = []
    walked = list(_walk(tmp_path, excluded=excluded))
    assert not any(path.startswith("node_modules/") for path in walked)
    assert [folder for folder, _ in excluded] == ["node_modules"]


def test_show_files_lists_the_walk_in_sorted_order(tmp_path: Path) -> None:
    _make(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--show-files", "--no-cache", "."],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.splitlines()
    assert shown == sorted(shown) and len(shown) == len(PATHS) - 1  # every file but "c/a", not a format it reads
