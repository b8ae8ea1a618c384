"""`advise --write FILE` applies the recommendation in place through the fixer; `--diff` shows it first."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from precisionlint.cli.commands import main

TOML = (
    "# team config\n"
    "[trainer_config]\n"
    'precision = "16-mixed"   # from the V100 days\n'
    'tf32_matmul_precision = "medium"\n'
    "max_epochs = 3\n"
)


def advise(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["advise", *args])


def test_write_changes_only_the_settings_and_keeps_comments(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(TOML)
    result = advise("--gpu", "A100", "--params", "7B", "--write", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_text() == (
        "# team config\n[trainer_config]\n"
        'precision = "bf16-mixed"   # from the V100 days\n'
        "max_epochs = 3\n"
    )
    again = advise("--gpu", "A100", "--params", "7B", "--write", str(path))
    assert again.exit_code == 0 and "nothing to change" in again.output


def test_diff_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(TOML)
    result = advise("--gpu", "A100", "--params", "7B", "--write", str(path), "--diff")
    assert result.exit_code == 0
    assert '-precision = "16-mixed"' in result.output and '+precision = "bf16-mixed"' in result.output
    assert path.read_text() == TOML


def test_training_arguments_gain_bf16(tmp_path: Path) -> None:
    path = tmp_path / "args.yaml"
    path.write_text("output_dir: out  # where checkpoints go\nper_device_train_batch_size: 8\nfp16: true\n")
    assert advise("--gpu", "H100", "--write", str(path)).exit_code == 0
    assert path.read_text() == ("output_dir: out  # where checkpoints go\nper_device_train_batch_size: 8\n"
                                "fp16: false\nbf16: true\n")


def test_pre_ampere_keeps_fp16_and_an_empty_file_gets_trainer_config(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("")
    assert advise("--gpu", "V100", "--params", "7B", "--write", str(path)).exit_code == 0
    assert path.read_text() == '[trainer_config]\nprecision = "16-mixed"\n'


def test_deepspeed_auto_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "ds.json"
    text = '{\n  "fp16": {"enabled": "auto"},\n  "bf16": {"enabled": "auto"}\n}\n'
    path.write_text(text)
    result = advise("--gpu", "H100", "--write", str(path))
    assert result.exit_code == 0 and path.read_text() == text


def test_write_refuses_python_and_diff_needs_write(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch\n")
    assert advise("--gpu", "A100", "--write", str(script)).exit_code == 2
    assert advise("--gpu", "A100", "--diff").exit_code == 2
