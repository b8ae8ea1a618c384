"""Fix safety follows the project's declared versions for every fix that writes a newer API or spelling, and
framework-version-mismatch's removal fixes (real projects on disk, the real CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _write(root: Path, files: dict[str, str]) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def _findings(cwd: Path, rule: str, *args: str) -> list[dict]:
    result = _check(cwd, "--select", rule, "--output-format", "json", *args, ".")
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


LEGACY = "seed_everything: 1\ntrainer:\n  precision: 16\n  max_epochs: 3\n"


@pytest.mark.parametrize(
    "pins,safe,note",
    [
        ("lightning>=2.1\n", True, ""),
        ("pytorch-lightning<2.3\n", False, "needs Lightning 2.0 or newer, and this project declares "
                                           "pytorch-lightning<2.3 (requirements.txt)"),
        ("numpy\n", False, "needs Lightning 2.0 or newer, and this project declares no Lightning version"),
    ],
)
def test_legacy_precision_fix_is_safe_only_with_a_lightning_2_floor(tmp_path: Path, pins: str, safe: bool,
                                                                    note: str) -> None:
    _write(tmp_path, {"requirements.txt": pins, "fit.yaml": LEGACY})
    [finding] = _findings(tmp_path, "legacy-precision-value")
    assert finding["fix"]["applicability"] == ("safe" if safe else "unsafe")
    assert note in finding["fix"]["description"]
    _check(tmp_path, "--select", "legacy-precision-value", "--fix", ".")
    assert ("16-mixed" in (tmp_path / "fit.yaml").read_text()) == safe


BF16_GPU = "seed_everything: 1\ntrainer:\n  precision: 16-mixed\n  max_epochs: 3\n"


@pytest.mark.parametrize(
    "pins,written,note",
    [
        ("pytorch-lightning==1.9.5\n", "bf16", "the Lightning 1.x spelling"),
        ("lightning>=2.2\n", "bf16-mixed", ""),
        ("numpy\n", "bf16-mixed", "needs Lightning 2.0 or newer, and this project declares no Lightning version"),
    ],
)
def test_bf16_advice_writes_the_spelling_of_the_pinned_lightning(tmp_path: Path, pins: str, written: str,
                                                                 note: str) -> None:
    text = BF16_GPU if written != "bf16" else BF16_GPU.replace("16-mixed", "16")
    _write(tmp_path, {"requirements.txt": pins, "fit.yaml": text})
    [finding] = _findings(tmp_path, "fp16-on-bf16-capable-gpu", "--gpu", "A100")
    assert finding["fix"]["applicability"] == "unsafe"
    assert note in finding["fix"]["description"]
    _check(tmp_path, "--select", "fp16-on-bf16-capable-gpu", "--gpu", "A100", "--fix", "--unsafe-fixes", ".")
    assert f"precision: {written}\n" in (tmp_path / "fit.yaml").read_text()


def test_unknown_precision_suggests_the_pinned_lightning_spelling(tmp_path: Path) -> None:
    text = "seed_everything: 1\ntrainer:\n  precision: bf16_mixed\n  max_epochs: 3\n"
    _write(tmp_path, {"requirements.txt": "pytorch-lightning==1.9.5\n", "fit.yaml": text})
    [finding] = _findings(tmp_path, "unknown-precision-value")
    assert "did you mean 'bf16'?" in finding["message"]
    assert finding["fix"]["description"] == "Replace with 'bf16'"
    (tmp_path / "requirements.txt").write_text("numpy\n")
    [finding] = _findings(tmp_path, "unknown-precision-value")
    assert "did you mean 'bf16-mixed'?" in finding["message"]
    assert "needs Lightning 2.0 or newer" in finding["fix"]["description"]


def test_including_emulation_fix_names_the_torch_it_needs(tmp_path: Path) -> None:
    script = ('import torch\n\ndtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16\n')
    _write(tmp_path, {"requirements.txt": "torch>=2.1\n", "train.py": script})
    [finding] = _findings(tmp_path, "emulated-bf16-selection", "--gpu", "T4")
    assert "needs torch 2.4 or newer, and this project declares torch>=2.1" in finding["fix"]["description"]
    (tmp_path / "requirements.txt").write_text("torch>=2.5\n")
    [finding] = _findings(tmp_path, "emulated-bf16-selection", "--gpu", "T4")
    assert "needs torch" not in finding["fix"]["description"]


DS_BF16 = ('{\n  "train_micro_batch_size_per_gpu": 8,\n  "bf16": {"enabled": true, "loss_scale": 0},\n'
           '  "zero_optimization": {"stage": 2}\n}\n')


@pytest.mark.parametrize("pins,found", [("deepspeed>=0.17.1\n", True), ("deepspeed==0.17.0\n", False),
                                        ("deepspeed>=0.15\n", False), ("torch\n", False)])
def test_bf16_loss_scale_is_reported_only_where_deepspeed_rejects_it(tmp_path: Path, pins: str,
                                                                     found: bool) -> None:
    _write(tmp_path, {"requirements.txt": pins, "ds_config.json": DS_BF16})
    findings = _findings(tmp_path, "framework-version-mismatch")
    assert len(findings) == found
    if found:
        assert findings[0]["severity"] == "error" and findings[0]["fix"]["applicability"] == "safe"
        _check(tmp_path, "--select", "framework-version-mismatch", "--fix", ".")
        assert json.loads((tmp_path / "ds_config.json").read_text())["bf16"] == {"enabled": True}


def test_bf16_loss_scale_in_a_likely_deepspeed_file_is_a_warning_with_an_unsafe_fix(tmp_path: Path) -> None:
    # Only the precision blocks: DeepSpeed-shaped, but nothing else says DeepSpeed reads it.
    _write(tmp_path, {"requirements.txt": "deepspeed>=0.18\n",
                      "precision.json": '{"bf16": {"enabled": true, "initial_scale_power": 16}}\n'})
    [finding] = _findings(tmp_path, "framework-version-mismatch")
    assert finding["severity"] == "warning" and finding["fix"]["applicability"] == "unsafe"


def test_bf16_loss_scale_in_an_embedded_deepspeed_block(tmp_path: Path) -> None:
    args = ("output_dir: out\nper_device_train_batch_size: 4\nbf16: true\ndeepspeed:\n  zero_optimization:\n"
            "    stage: 3\n  bf16:\n    enabled: auto\n    hysteresis: 2\n")
    _write(tmp_path, {"requirements.txt": "deepspeed==0.18.2\ntransformers>=4.50\n", "args.yaml": args})
    [finding] = _findings(tmp_path, "framework-version-mismatch")
    assert (finding["line"], finding["column"]) == (9, 5)


def test_lightning_apex_arguments_under_lightning_2(tmp_path: Path) -> None:
    config = ("seed_everything: 1\ntrainer:\n  precision: 16-mixed\n  devices: 2\n  amp_backend: apex\n"
              "  amp_level: O2\n")
    script = ("from pytorch_lightning import Trainer\n\ntrainer = Trainer(precision=16, amp_backend='native')\n"
              "fabric_like = Trainer(precision=16)\n")
    _write(tmp_path, {"requirements.txt": "lightning>=2.0\n", "fit.yaml": config, "train.py": script})
    findings = _findings(tmp_path, "framework-version-mismatch")
    where = sorted((f["path"], f["line"], f["column"]) for f in findings)
    assert where == [("fit.yaml", 5, 3), ("fit.yaml", 6, 3), ("train.py", 3, 33)]
    assert all("removed from the Lightning Trainer in 2.0" in f["message"] for f in findings)
    yaml_fixes = [f["fix"] for f in findings if f["path"] == "fit.yaml"]
    assert all(fix["applicability"] == "unsafe" for fix in yaml_fixes)
    _check(tmp_path, "--select", "framework-version-mismatch", "--fix", "--unsafe-fixes", ".")
    assert (tmp_path / "fit.yaml").read_text() == "seed_everything: 1\ntrainer:\n  precision: 16-mixed\n  devices: 2\n"
    # Under Lightning 1.x they are the Trainer's own arguments.
    (tmp_path / "fit.yaml").write_text(config.replace("16-mixed", "16"))
    (tmp_path / "requirements.txt").write_text("pytorch-lightning==1.9.5\n")
    assert _findings(tmp_path, "framework-version-mismatch") == []


def test_transformers_5_removed_keys(tmp_path: Path) -> None:
    args = ('{"output_dir": "out", "per_device_train_batch_size": 8, "fp16": true, "fp16_backend": "amp",\n'
            ' "fp16_full_eval": true}\n')
    _write(tmp_path, {"requirements.txt": "transformers==5.0.0\n", "args.json": args})
    [finding] = _findings(tmp_path, "framework-version-mismatch")
    assert "`fp16_backend` was removed from TrainingArguments in Transformers 5" in finding["message"]
    (tmp_path / "requirements.txt").write_text("transformers>=4.40\n")
    assert _findings(tmp_path, "framework-version-mismatch") == []
