"""`precisionlint advise` through click's CliRunner (a local group holding only the command), plus the
no-torch case in a child interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from precisionlint.cli.advise_command import advise

ROOT = Path(__file__).resolve().parent.parent


@click.group()
def cli() -> None:
    """A stand-in for precisionlint.cli.commands.main, so these tests need only the advise command."""


cli.add_command(advise)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["advise", *args], catch_exceptions=False)


def test_text_output_for_a_named_gpu() -> None:
    result = invoke("--gpu", "A100", "--params", "7B")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Recommendation for A100 SXM (Ampere, cc 8.0)")
    assert "precision              bf16-mixed" in out
    assert "Decision path" in out and "1. Native bf16" in out
    for title in ("[trainer_config] TOML", "Lightning YAML", "Lightning Trainer(...)", "TrainingArguments",
                  "Accelerate config", "DeepSpeed JSON", "Plain PyTorch"):
        assert title in out
    assert "assumed" not in out


def test_missing_params_says_which_branch_was_assumed() -> None:
    result = invoke("--gpu", "V100")
    assert result.exit_code == 0
    assert "--params not given: the large-model branch was assumed" in result.stdout
    assert "16-mixed" in result.stdout and "GradScaler(" in result.stdout


def test_json_output() -> None:
    result = invoke("--gpu", "NVIDIA A100-SXM4-80GB", "--gpu", "Tesla V100-SXM2-16GB", "--params", "350M",
                    "--priority", "speed", "--output-format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    rec = data["recommendation"]
    assert (rec["precision"], rec["dtype"], rec["grad_scaler"], rec["params"]) == ("16-mixed", "fp16", True, 350e6)
    assert rec["targets"] == ["A100 SXM", "V100 SXM2"]
    assert [step["question"] for step in rec["path"]][0] == "Which GPUs?"
    assert data["settings"]["mixed_precision"] == "fp16"
    assert [t["compute_capability"] for t in data["targets"]] == ["8.0", "7.0"]
    assert data["targets"][0]["peak_tflops"]["bf16"] == 312.0 and "http" in data["targets"][0]["source"]
    assert set(data["snippets"]) == {"trainer_config", "lightning_yaml", "lightning_python", "transformers",
                                     "accelerate", "deepspeed", "pytorch"}
    assert data["probe"] is None and data["config"] is None


@pytest.mark.parametrize(
    "args,message",
    [
        ((), "--gpu NAME"),
        (("--gpu", "A100", "--probe"), "not both"),
        (("--gpu", "H1OO"), "did you mean 'H100 SXM'"),
        (("--gpu", "A100", "--params", "lots"), "not a parameter count"),
        (("--gpu", "A100", "--budget", "5"), "only apply with --probe"),
        (("--gpu", "A100", "--priority", "cost"), "'cost' is not one of"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_config_comparison_text_and_json(tmp_path: Path) -> None:
    config = tmp_path / "train.toml"
    config.write_text('[trainer_config]\nprecision = "16-mixed"  # old\n')
    text = invoke("--gpu", "H100", "--params", "7B", "--config", str(config))
    assert text.exit_code == 0
    assert f"Your config: {config}" in text.stdout
    assert f'{config}:2:13: change trainer_config.precision = "16-mixed" -> "bf16-mixed"' in text.stdout
    data = json.loads(invoke("--gpu", "H100", "--params", "7B", "--config", str(config),
                             "--output-format", "json").stdout)
    assert data["config"]["needs_changes"] is True
    assert data["config"]["changes"][0]["action"] == "change"


def test_config_that_matches_says_nothing_to_change(tmp_path: Path) -> None:
    config = tmp_path / "accelerate.yaml"
    config.write_text("compute_environment: LOCAL_MACHINE\nmixed_precision: bf16\n")
    result = invoke("--gpu", "L40S", "--config", str(config))
    assert result.exit_code == 0 and "Nothing to change." in result.stdout


def test_config_errors_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text('trainer:\n  precision: "bf16-mixed\n')
    result = invoke("--gpu", "A100", "--config", str(broken))
    assert result.exit_code == 2 and "broken.yaml" in result.stderr
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert invoke("--gpu", "A100", "--config", str(other)).exit_code == 2
    assert invoke("--gpu", "A100", "--config", str(tmp_path / "missing.toml")).exit_code == 2


def test_list_gpus() -> None:
    result = invoke("--list-gpus")
    assert result.exit_code == 0
    assert "H100 SXM" in result.stdout and "MI300X" in result.stdout and "gfx942" in result.stdout
    listed = json.loads(invoke("--list-gpus", "--output-format", "json").stdout)
    assert any(g["name"] == "T4" and g["compute_capability"] == "7.5" for g in listed)


def test_gpu_auto_without_a_gpu_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from precisionlint.advise import local_gpus

    monkeypatch.setattr(local_gpus, "local_gpus", lambda: ())
    result = invoke("--gpu", "auto")
    assert result.exit_code == 2 and "found no GPU" in result.stderr


def test_probe_on_the_cpu_for_real() -> None:
    pytest.importorskip("torch")
    result = invoke("--probe", "--budget", "3", "--size", "128", "--params", "1B", "--output-format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # no progress lines when stderr is not a terminal
    data = json.loads(result.stdout)
    probe = data["probe"]
    assert probe["size"] == 128 and probe["budget_s"] == 3.0
    if probe["device"]["kind"] == "cpu":
        assert data["recommendation"]["device"] == "cpu"
        assert [t["format"] for t in probe["timings"]] == ["fp32", "bf16"]
        assert data["recommendation"]["tf32_matmul_precision"] is None
    assert data["recommendation"]["measured"] is True and data["recommendation"]["evidence"]


def test_probe_text_output_shows_the_measurements() -> None:
    pytest.importorskip("torch")
    result = invoke("--probe", "--budget", "3", "--size", "128")
    assert result.exit_code == 0
    assert "Measured (" in result.stdout and "TFLOP/s (median of" in result.stdout
    assert "Relative error of a 128x128 matmul against float64" in result.stdout


def test_probe_without_torch_exits_2_with_one_line() -> None:
    from tests.test_probe import BLOCK_TORCH

    code = BLOCK_TORCH + (
        "import click\n"
        "from precisionlint.cli.advise_command import advise\n"
        "group = click.Group(commands={'advise': advise})\n"
        "group(['advise', '--probe'], prog_name='precisionlint')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install '.[probe]'" in lines[0]
    assert out.stdout == ""


def test_a_failing_device_is_reported_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from precisionlint.advise.probe import measure

    def broken(**_kwargs: object) -> None:
        raise RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported")

    monkeypatch.setattr(measure, "run_probe", broken)
    result = invoke("--probe")
    assert result.exit_code == 2
    assert result.stderr == "precisionlint: error: the probe failed on this device: CUDA error: out of memory\n"


def _precision(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["recommendation"]["precision"]


def test_a_bf16_checkpoint_is_not_advised_fp16_on_a_gpu_without_bf16(tmp_path: Path) -> None:
    """fp16-on-bf16-checkpoint in advise: a T4 would get 16-mixed; a checkpoint published in bf16 gets float32,
    or 16-mixed with the warning when speed is the priority. Named by --model (hub id or folder), by the model a
    --config names, or by a --shapes config.json."""
    assert _precision(invoke("--gpu", "T4", "--output-format", "json")) == "16-mixed"
    assert _precision(invoke("--gpu", "T4", "--model", "Qwen/Qwen2.5-7B", "--output-format", "json")) == "32-true"
    speed = invoke("--gpu", "T4", "--model", "Qwen/Qwen2.5-7B", "--priority", "speed")
    assert "precision              16-mixed" in speed.stdout
    assert "Was the checkpoint trained in bf16? yes" in speed.stdout
    assert "inf/NaN" in speed.stdout
    # a family not known to be bf16 (Llama 2's weights are float16) changes nothing
    assert _precision(invoke("--gpu", "T4", "--model", "meta-llama/Llama-2-7b-hf", "--output-format",
                             "json")) == "16-mixed"
    # a local checkpoint folder named by an axolotl config beside it
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "intermediate_size": 11008,
        "vocab_size": 32000, "dtype": "bfloat16"}))
    config = tmp_path / "axolotl.yaml"
    config.write_text("base_model: ./ckpt\nfp16: true\n")
    assert _precision(invoke("--gpu", "V100", "--config", str(config), "--output-format", "json")) == "32-true"
    # the same config.json given as --shapes
    assert _precision(invoke("--gpu", "V100", "--shapes", str(checkpoint / "config.json"), "--output-format",
                             "json")) == "32-true"
    # a GPU with bf16 is unaffected
    assert _precision(invoke("--gpu", "A100", "--model", "Qwen/Qwen2.5-7B", "--output-format",
                             "json")) == "bf16-mixed"
