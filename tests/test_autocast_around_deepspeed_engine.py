"""autocast-around-deepspeed-engine: the severity follows the pinned deepspeed, and findings name the config."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).resolve().parent.parent / "rules" / "autocast-around-deepspeed-engine"


def _findings(project: str, tmp_path: Path) -> list[tuple[str, int, str, list[str]]]:
    # A copy outside this repository: its own configuration excludes rules/ from a walk of the clone.
    copy = tmp_path / project
    shutil.copytree(CASES / project, copy)
    command = [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--select", "PL404",
               "--output-format", "json", "."]
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return [(f["path"], f["line"], f["severity"], [r["path"] for r in f.get("related", [])])
            for f in json.loads(done.stdout)]


@pytest.mark.parametrize(("project", "expected"), [
    ("bad_pinned_0_17_4", [("train.py", 10, "error", ["ds_config.json"])]),
    ("bad_mismatch", [("train.py", 14, "warning", ["ds_fp16.json"]), ("train.py", 23, "warning", [])]),
    ("bad_launcher", [("run.sh", 4, "warning", ["train.py", "ds_config.json"])]),
    ("bad_unpinned", [("train.py", 6, "info", ["ds.json"])]),
])
def test_severity_follows_the_pinned_version(project: str, expected: list, tmp_path: Path) -> None:
    assert _findings(project, tmp_path) == expected


def test_notebook_cells_are_read_as_one_program(tmp_path: Path) -> None:
    """The engine is created in one cell and called under autocast in a later one."""
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["!pip install deepspeed\n", "import deepspeed\n", "import torch\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["engine, _, _, _ = deepspeed.initialize(model=torch.nn.Linear(8, 8), config='ds.json')\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["for step in range(3):\n", "    with torch.autocast('cuda', dtype=torch.bfloat16):\n",
                    "        loss = engine(torch.randn(4, 8, device='cuda')).sum()\n", "    engine.backward(loss)\n"]},
    ]
    (tmp_path / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                      "nbformat_minor": 5}))
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}}')
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "nb"\ndependencies = ["deepspeed>=0.18"]\n')
    command = [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--select", "PL404", "train.ipynb"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("train.ipynb:cell 3:2:10: PL404 [warning]")
