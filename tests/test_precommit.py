"""The pre-commit hook, for real: `pre-commit try-repo` installs this repository into a fresh hook
environment (which has no torch) and runs it on a temporary git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_hook_manifest() -> None:
    from ruamel.yaml import YAML

    (hook,) = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "precisionlint" and hook["language"] == "python"
    assert hook["types_or"] == ["toml", "yaml", "json", "python"]
    major, minor, _ = (int(p) for p in hook["minimum_pre_commit_version"].split("."))
    assert (major, minor) >= (2, 9)  # types_or arrived in 2.9.0


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    if not (ROOT / ".git").exists():
        pytest.skip("needs this repository as a git checkout")
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    _git(work, "config", "user.email", "t@example.com")
    _git(work, "config", "user.name", "t")
    (work / "trainer.toml").write_text('[trainer_config]\nprecision = "16-mixed"\ntf32_matmul_precision = "high"\n')
    (work / "clean.yaml").write_text("trainer:\n  precision: bf16-mixed\n")
    (work / "notes.txt").write_text("precision: fp16\n")  # not a type the hook runs on
    _git(work, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "precisionlint", "--all-files"],
        cwd=work, capture_output=True, text=True, env=env, timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "trainer.toml:3:25: PL104" in output
    assert "clean.yaml" not in output.split("Failed")[-1].replace("- hook id", "")
    assert "notes.txt" not in output
    (work / "trainer.toml").write_text('[trainer_config]\nprecision = "16-mixed"\n')
    _git(work, "add", ".")
    again = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "precisionlint", "--all-files"],
        cwd=work, capture_output=True, text=True, env=env, timeout=600,
    )
    assert again.returncode == 0, again.stdout + again.stderr
