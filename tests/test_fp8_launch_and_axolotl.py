"""fp8-unsupported-gpu through the real CLI: axolotl's `fp8: true` (axolotl 0.13.1+ asks for compute
capability 9.0, so an Ada GPU, 8.9 with FP8 tensor cores, is refused too; an older axolotl pin keeps the hardware's
8.9), and the recipes a Megatron-LM launch script asks for with --fp8-format / --fp8-recipe / --fp4-format."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFIG = """base_model: meta-llama/Llama-3.2-3B
micro_batch_size: 1
sequence_len: 2048
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
bf16: true
fp8: true
torch_compile: true
"""


def _check(folder: Path, gpu: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--no-progress", "--exit-zero", "--select",
         "PL304", "--gpu", gpu, "--output-format", "concise", "cfg.yaml"],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _project(tmp_path: Path, pins: str | None) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    if pins is not None:
        (tmp_path / "requirements.txt").write_text(pins)
    return tmp_path


def test_axolotl_fp8_on_ada_is_refused_by_axolotl(tmp_path: Path) -> None:
    out = _check(_project(tmp_path, None), "L4")
    assert "cfg.yaml:8:6: PL304 [error]" in out
    assert "below compute capability 9.0" in out and "fp8 requested, but fp8 is not supported on this GPU" in out


def test_axolotl_fp8_on_hopper_passes(tmp_path: Path) -> None:
    assert "PL304" not in _check(_project(tmp_path, None), "H100")


def test_an_older_axolotl_pin_keeps_the_hardware_floor(tmp_path: Path) -> None:
    project = _project(tmp_path, "axolotl==0.12.2\n")
    assert "PL304" not in _check(project, "L4")
    assert "without FP8 tensor cores" in _check(project, "A100")


def _launch(folder: Path, text: str, gpu: str) -> str:
    (folder / "train.sh").write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--no-progress", "--exit-zero", "--select",
         "PL304", "--gpu", gpu, "--output-format", "concise", "train.sh"],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_megatron_launch_flags_against_the_target_gpu(tmp_path: Path) -> None:
    mxfp8 = "torchrun pretrain_gpt.py --bf16 --fp8-format e4m3 --fp8-recipe mxfp8\n"
    assert "train.sh:1:64: PL304" in _launch(tmp_path, mxfp8, "H100")
    assert "PL304" not in _launch(tmp_path, mxfp8, "B200")
    assert "not 12.x" in _launch(tmp_path, mxfp8, "RTX 5090")  # Transformer Engine refuses MXFP8 on 12.x
    nvfp4 = "torchrun pretrain_gpt.py --bf16 --fp4-format e2m1\n"
    assert "NVFP4" in _launch(tmp_path, nvfp4, "H100")
    blockwise = "torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe blockwise\n"
    assert "PL304" not in _launch(tmp_path, blockwise, "H100")
    assert "FP8 block scaling" in _launch(tmp_path, blockwise, "L40S")
    several = "case $M in a) R=(--fp8-format e4m3);; esac\ntorchrun pretrain_gpt.py --fp8-recipe mxfp8 \"${R[@]}\"\n"
    assert "PL304" not in _launch(tmp_path, several, "H100")  # the format is set under a `case`
