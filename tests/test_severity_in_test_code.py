"""Training-outcome rules speak softly in test suites: a test runs one step to check the mechanics (diffusers'
training tests, llm-foundry's flash-attention tests), it does not train a model. The same code outside a test
suite keeps its full severity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from precisionlint.cli.commands import main

STEPS = '''\
import torch


def one_fp16_step():
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(2, 4, device="cuda")).sum()
    loss.backward()
    optimizer.step()


def half_model_step():
    model = torch.nn.Linear(4, 4).cuda().half()
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.randn(2, 4, device="cuda", dtype=torch.float16)).sum().backward()
    optimizer.step()


def backward_inside():
    model = torch.nn.Linear(4, 4).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        model(torch.randn(2, 4, device="cuda")).sum().backward()
'''
RULES = {"PL201", "PL203", "PL210", "PL211"}


def severities(tmp_path: Path, relative: str) -> dict[str, str]:
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(STEPS)
    (tmp_path / "precisionlint.toml").write_text("")
    result = CliRunner().invoke(
        main, ["check", "--config", str(tmp_path / "precisionlint.toml"), "--no-cache", "--output-format", "json",
               "--exit-zero", str(target)],
    )
    assert result.exit_code == 0, result.output
    return {f["code"]: f["severity"] for f in json.loads(result.output) if f["code"] in RULES}


@pytest.mark.parametrize("relative", ["tests/steps.py", "src/pkg/test_steps.py", "conftest.py"])
def test_in_a_test_suite_they_are_informational(tmp_path: Path, relative: str) -> None:
    assert severities(tmp_path, relative) == {code: "info" for code in RULES}


def test_outside_a_test_suite_they_keep_their_severity(tmp_path: Path) -> None:
    assert severities(tmp_path, "train/steps.py") == {
        "PL201": "error", "PL203": "warning", "PL210": "warning", "PL211": "error",
    }


# The hardware rules' autocast findings follow what the file shows about training: a region whose outputs reach a
# backward keeps the rule's severity; a region in a training file whose outputs are not seen reaching a loss (the
# validation pass of diffusers' training scripts) is information; nothing is said about a float16 region in a
# file that never trains (inference scripts, the precision helpers of Composer, MMEngine, Accelerate), where
# float16 keeps three more mantissa bits than bfloat16 and there is no loss to scale.
REGIONS = '''\
import torch


def train_step(model, batch, optimizer, scaler):
    with torch.autocast("cuda", dtype=DTYPE):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def validate(pipeline, prompt):
    with torch.autocast("cuda", dtype=DTYPE):
        return pipeline(prompt)
'''
INFERENCE = '''\
import torch


@torch.no_grad()
def generate(pipeline, prompt):
    with torch.autocast("cuda", dtype=DTYPE):
        return pipeline(prompt)
'''


def _hardware(tmp_path: Path, relative: str, text: str, gpu: str) -> list[tuple[int, str, str, str]]:
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text.replace("DTYPE", "torch.float16" if gpu == "A100" else "torch.bfloat16"))
    (tmp_path / "precisionlint.toml").write_text("")
    result = CliRunner().invoke(
        main, ["check", "--config", str(tmp_path / "precisionlint.toml"), "--no-cache", "--output-format", "json",
               "--exit-zero", "--gpu", gpu, "--select", "PL301,PL302", str(target)],
    )
    assert result.exit_code == 0, result.output
    return [(f["line"], f["code"], f["severity"], f["message"]) for f in json.loads(result.output)]


def test_fp16_region_advice_follows_the_evidence_of_training(tmp_path: Path) -> None:
    (train, validate) = _hardware(tmp_path, "train/step.py", REGIONS, "A100")
    assert train[:3] == (5, "PL301", "warning") and "drop the GradScaler" in train[3]
    assert validate[:3] == (13, "PL301", "info") and "if a loss computed here is trained on" in validate[3]
    assert _hardware(tmp_path, "scripts/generate.py", INFERENCE, "A100") == []
    assert [f[2] for f in _hardware(tmp_path, "tests/test_step.py", REGIONS, "A100")] == ["info", "info"]


def test_bf16_region_advice_names_a_scaler_only_where_the_file_trains(tmp_path: Path) -> None:
    (train, validate) = _hardware(tmp_path, "train/step.py", REGIONS, "V100")
    assert train[1:3] == validate[1:3] == ("PL302", "warning")
    assert "with a GradScaler" in train[3]
    [generate] = _hardware(tmp_path, "scripts/generate.py", INFERENCE, "V100")
    assert generate[1:3] == ("PL302", "warning")
    assert generate[3].endswith("use dtype=torch.float16")
    assert [f[2] for f in _hardware(tmp_path, "tests/test_step.py", REGIONS, "V100")] == ["info", "info"]


@pytest.mark.parametrize(
    "name,text,severity,advice",
    [
        ("train.yaml", "trainer:\n  accelerator: gpu\n  precision: transformer-engine\n", "error", "'bf16-mixed'"),
        ("composer.yaml", "run_name: x\nprecision: amp_fp8\nmax_duration: 10ba\n", "error", "'amp_bf16'"),
        # Accelerate falls back to fp16 with a warning: the run goes on, in another precision
        ("accelerate.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: fp8\n",
         "warning", "'bf16'"),
        ("tests/test_fp8.yaml", "trainer:\n  accelerator: gpu\n  precision: transformer-engine\n", "info",
         "'bf16-mixed'"),
    ],
)
def test_fp8_advice_speaks_the_framework_and_weighs_the_effect(tmp_path: Path, name: str, text: str,
                                                               severity: str, advice: str) -> None:
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    (tmp_path / "precisionlint.toml").write_text("")
    result = CliRunner().invoke(
        main, ["check", "--config", str(tmp_path / "precisionlint.toml"), "--no-cache", "--output-format", "json",
               "--exit-zero", "--gpu", "A100", "--select", "PL304", str(target)],
    )
    [finding] = json.loads(result.output)
    assert finding["severity"] == severity
    assert finding["message"].endswith(f"use {advice}")


def _severities(tmp_path: Path, text: str, names: tuple[str, ...], gpu: str, code: str) -> dict[str, str]:
    """The severity of the one `code` finding in each of `names`, each holding `text`, checked for `gpu`."""
    found = {}
    (tmp_path / "precisionlint.toml").write_text("")
    for name in names:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        result = CliRunner().invoke(
            main, ["check", "--config", str(tmp_path / "precisionlint.toml"), "--no-cache", "--output-format",
                   "json", "--exit-zero", "--gpu", gpu, "--select", code, str(target)],
        )
        [finding] = json.loads(result.output)
        found[name] = finding["severity"]
    return found


def test_emulated_bf16_selection_is_information_in_tests(tmp_path: Path) -> None:
    text = "import torch\n\ndtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16\n"
    found = _severities(tmp_path, text, ("train.py", "tests/test_dtype.py"), "V100", "PL306")
    assert found == {"train.py": "warning", "tests/test_dtype.py": "info"}


@pytest.mark.parametrize(
    "gpu,code,config",
    [
        # DeepSpeed's own test suite keeps fp16 configs (tests/model/*.json) to exercise its fp16 path
        ("A100", "PL301", '{"train_batch_size": 8, "fp16": {"enabled": true}}\n'),
        ("V100", "PL302", '{"train_batch_size": 8, "bf16": {"enabled": true}}\n'),
    ],
)
def test_hardware_settings_are_information_in_tests(tmp_path: Path, gpu: str, code: str, config: str) -> None:
    found = _severities(tmp_path, config, ("configs/ds_config.json", "tests/model/ds_config.json"), gpu, code)
    assert found == {"configs/ds_config.json": "warning", "tests/model/ds_config.json": "info"}


def test_fp16_region_advice_names_a_gradscaler_only_where_the_file_has_one(tmp_path: Path) -> None:
    """torchao's float8 FSDP test trains under `torch.autocast("cuda")` with no GradScaler: the advice to use
    bfloat16 stands, but there is no GradScaler to drop."""
    unscaled = REGIONS.replace("def train_step(model, batch, optimizer, scaler):",
                               "def train_step(model, batch, optimizer):")
    unscaled = unscaled.replace("    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n",
                                "    loss.backward()\n    optimizer.step()\n")
    (train, _) = _hardware(tmp_path, "train/step.py", unscaled, "A100")
    assert train[:3] == (5, "PL301", "warning")
    assert train[3].endswith("use dtype=torch.bfloat16, as fast and without loss scaling"), train[3]
