"""benchmarks/cold_floor.py: the floor process parses exactly the files a check must parse (a Python file whose
tree a pass reads, a config that passes the prefilter) and none of the others, and the benchmark prints its three
rows as ratios to the baseline."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cold_floor", ROOT / "benchmarks" / "cold_floor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))  # it takes the baseline from benchmarks/run.py
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def _tree(folder: Path) -> Path:
    (folder / "train.py").write_text('import torch\n\nwith torch.autocast("cuda"):\n    pass\n')  # the model reads it
    (folder / "metrics.py").write_text("# the precision of the metric\nx = 1\n")  # prefilter: yes; no pass reads it
    (folder / "plain.py").write_text("x = 1\n")  # not even read past the prefilter
    (folder / "trainer.yaml").write_text("trainer:\n  precision: 16\n")  # a config that names a precision
    return folder


def test_floor_parses_only_what_a_check_must(tmp_path: Path) -> None:
    floor = _benchmark().FLOOR
    tree = _tree(tmp_path)
    done = subprocess.run([sys.executable, "-c", floor, str(tree)], capture_output=True, text=True, check=True,
                          env=_benchmark()._env(), timeout=120)
    assert ast.literal_eval(done.stdout.strip()) == {"files": 4, "read": 3, "parsed": 2}


def test_floor_counts_a_python_file_with_a_syntax_error_as_read_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("with torch.autocast('cuda'):\npass\n")  # read by the model's gate, unparsable
    done = subprocess.run([sys.executable, "-c", _benchmark().FLOOR, str(tmp_path)], capture_output=True, text=True,
                          check=True, env=_benchmark()._env(), timeout=120)
    assert ast.literal_eval(done.stdout.strip()) == {"files": 1, "read": 1, "parsed": 0}


def test_benchmark_prints_the_three_ratios(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    _tree(tree)
    assert _benchmark().main(["--runs", "1", str(tree)]) == 0
    out = capsys.readouterr().out
    assert "baseline (read + ast.parse every .py)" in out and " 1.00x " in out
    assert "floor (discover, read, prefilter, parse what is read)" in out
    assert "check --no-cache" in out
    assert "{'files': 4, 'read': 3, 'parsed': 2}" in out
