"""Big files under the default limits: a 5 MB training script, a 5 MB YAML and a 20 MB JSON config (real-shaped,
made by benchmarks/big_files.py's generators) are checked, not refused, and their findings reported; a truly
pathological file beside them is still refused with one line naming it, and the other files are checked.
benchmarks/big_files.py measures what they cost against their parsers."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _generators() -> ModuleType:
    spec = importlib.util.spec_from_file_location("big_files", ROOT / "benchmarks" / "big_files.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check(folder: Path) -> subprocess.CompletedProcess[str]:
    # A project of its own (no precisionlint settings: the default limits), checked as a user runs it.
    (folder / "pyproject.toml").write_text('[project]\nname = "big"\nversion = "0"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("PRECISIONLINT_CACHE_DIR", None)
    command = [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--no-progress", "--output-format",
               "concise", "."]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False, timeout=600)


def _line_of(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


# The last function of the script: gradients clipped while still scaled (clip-before-unscale).
CLIPPED_SCALED = (
    "\n\ndef last_step(model, batch, optimizer, scaler):\n"
    '    with torch.autocast("cuda", dtype=torch.float16):\n'
    "        loss = model(batch).mean()\n"
    "    scaler.scale(loss).backward()\n"
    "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
    "    scaler.step(optimizer)\n"
    "    scaler.update()\n"
)


def test_a_5_mb_training_script_is_checked_and_a_dense_literal_beside_it_refused_in_one_line(tmp_path: Path) -> None:
    """The 5 MB script used to be refused by the memory estimate (150 MB); under the default limits it is
    analysed to its last function. A 4 MB list literal (two million tree nodes: over 2 GB as a tree) is still
    refused before it is parsed, in one line that names it, and the small config beside them is checked."""
    script = _generators().training_script(5_000_000) + CLIPPED_SCALED
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "dense.py").write_text(
        "import torch\nmodel = Net().half()\nopt = torch.optim.SGD(model.parameters())\n"
        "DATA = [" + ",".join(["7"] * 2_100_000) + "]\n"
    )
    (tmp_path / "trainer.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    result = _check(tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.strip() == "", result.stderr
    lines = result.stdout.splitlines()
    refused = [line for line in lines if "PL003" in line]
    assert len(refused) == 1 and refused[0].startswith("dense.py:1:1: PL003 [error] analysing this "), refused
    assert "max-memory" in refused[0] and "not checked" in refused[0]
    clip_line = _line_of(script, "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    scaler.step")
    assert f"train.py:{clip_line}:5: PL204" in result.stdout, result.stdout
    assert "trainer.yaml:2:14: PL102" in result.stdout


def test_a_5_mb_yaml_and_a_20_mb_json_config_are_checked(tmp_path: Path) -> None:
    """The YAML used to be refused by the memory estimate, the JSON (a DeepSpeed config carrying a tokenizer
    payload of 800,000 values) by its size; both are read whole and their settings checked."""
    generators = _generators()
    yaml_text = generators.trainer_yaml(5_000_000).replace("precision: 16-mixed", "precision: 16", 1)
    (tmp_path / "trainer.yaml").write_text(yaml_text)
    json_text = generators.deepspeed_json(20_000_000).replace(
        '"bf16": {\n    "enabled": false', '"bf16": {\n    "enabled": true', 1)
    (tmp_path / "ds_config.json").write_text(json_text)
    assert (tmp_path / "ds_config.json").stat().st_size > 19_000_000
    result = _check(tmp_path)
    assert result.returncode == 1, result.stderr
    assert "PL003" not in result.stdout, result.stdout
    bf16_line = _line_of(json_text, '"bf16"') + 1
    assert f"ds_config.json:{bf16_line}:16: PL105" in result.stdout, result.stdout
    assert f"trainer.yaml:{_line_of(yaml_text, 'precision: 16')}:14: PL102" in result.stdout, result.stdout
