"""The GPU-support rules (PL301-PL304) say nothing of a file written for another accelerator (Habana Gaudi, TPU,
Apple MPS): a Gaudi project's DeepSpeed config never runs on the target GPUs. The evidence is checked through the
real CLI, on files on disk, with the cache: renaming the project brings the finding back."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from precisionlint.cli.commands import main
from precisionlint.core.racy_stat import RACY_SECONDS

DS_CONFIG = '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}\n'
SETUP = 'from setuptools import setup\n\nsetup(name="{name}", install_requires=["torch"])\n'


def _check(path: Path, *extra: str) -> list[dict]:
    result = CliRunner().invoke(main, ["check", "--no-progress", "--exit-zero", "--gpu", "V100",
                                       "--output-format", "json", *extra, str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _run(cwd: Path, path: Path, *extra: str) -> list[dict]:
    """A whole CLI run in its own process, as a user (or a pre-commit hook) starts one."""
    result = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-progress", "--exit-zero",
                             "--gpu", "V100", "--output-format", "json", *extra, str(path)],
                            cwd=cwd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_gaudi_project_s_deepspeed_config_is_not_about_the_target_gpus_and_the_cache_follows_its_name(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "examples").mkdir(parents=True)
    (project / "setup.py").write_text(SETUP.format(name="optimum-habana"))
    (project / "examples" / "ds_config.json").write_text(DS_CONFIG)
    time.sleep(RACY_SECONDS + 0.05)  # old enough for the cache to trust (see precisionlint.core.racy_stat.settled)
    # --select PL302 alone: the rule reads the project by itself, so its results are keyed by the pin files.
    assert _run(tmp_path, project, "--select", "PL302") == []
    assert _run(tmp_path, project, "--select", "PL302") == []  # warm
    assert list(tmp_path.glob(".precisionlint_cache/*")), "the results were cached"  # in the working directory
    (project / "setup.py").write_text(SETUP.format(name="my-trainer"))
    time.sleep(RACY_SECONDS + 0.05)
    found = _run(tmp_path, project, "--select", "PL302")
    assert [(f["code"], Path(f["path"]).name) for f in found] == [("PL302", "ds_config.json")]


def test_a_config_of_a_gaudi_project_that_names_cuda_keeps_its_finding(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(SETUP.format(name="optimum-habana"))
    (tmp_path / "ds_config.json").write_text(
        '{"comment": "for the CUDA runners", "bf16": {"enabled": true}}\n')
    found = _check(tmp_path, "--no-cache", "--select", "PL302")
    assert [f["code"] for f in found] == ["PL302"]


def test_a_project_that_only_depends_on_optimum_habana_is_not_taken_for_a_gaudi_one(tmp_path: Path) -> None:
    # huggingface/optimum lists optimum-habana among its extras and runs on NVIDIA GPUs too.
    (tmp_path / "setup.py").write_text(
        'from setuptools import setup\n\nsetup(name="optimum", extras_require={"habana": ["optimum-habana>=1.17"]})\n')
    (tmp_path / "ds_config.json").write_text(DS_CONFIG)
    found = _check(tmp_path, "--no-cache", "--select", "PL302")
    assert [f["code"] for f in found] == ["PL302"]


def test_the_other_rules_still_read_a_gaudi_project_s_files(tmp_path: Path) -> None:
    # conflicting-precision is about the config itself, whatever runs it: it still fires.
    (tmp_path / "setup.py").write_text(SETUP.format(name="optimum-habana"))
    (tmp_path / "ds_config.json").write_text('{"bf16": {"enabled": true}, "fp16": {"enabled": true}}\n')
    found = _check(tmp_path, "--no-cache")
    codes = {f["code"] for f in found}
    assert "PL302" not in codes
    assert codes, found
