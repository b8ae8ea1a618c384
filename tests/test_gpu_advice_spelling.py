"""The hardware rules suggest a precision in the words of the framework that reads the setting: a config is only
helped by a value its reader accepts (Lightning's '16-mixed' means nothing to Accelerate or Transformers)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from precisionlint.cli.commands import main

FILES = {
    "accelerate.yaml": ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\n",
                        "use 'fp16' (fp16 with loss scaling)"),
    "args.yaml": ("output_dir: out\nper_device_train_batch_size: 8\nlearning_rate: 2.0e-5\nbf16: true\n",
                  "use `fp16: true` (fp16 with loss scaling)"),
    "train.py": ("from transformers import TrainingArguments\nargs = TrainingArguments('out', bf16=True)\n",
                 "use `fp16=True` (fp16 with loss scaling)"),
    "trainer.toml": ("[trainer_config]\nprecision = \"bf16-mixed\"\n", "use '16-mixed' (fp16 with loss scaling)"),
    "composer.yaml": ("precision: amp_bf16\nmax_duration: 1ep\nmodel:\n  name: mpt_causal_lm\n"
                      "optimizer:\n  name: decoupled_adamw\n", "use 'amp_fp16' (fp16 with loss scaling)"),
    "torchtune.yaml": ("model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: bf16\nepochs: 1\n",
                       "use `dtype: fp32` (its recipes refuse fp16)"),
    "ds_config.json": ('{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}\n',
                       "use fp16 mixed precision with loss scaling"),
}


def test_bf16_on_a_gpu_without_it_suggests_fp16_in_the_reader_s_own_words(tmp_path: Path) -> None:
    for name, (text, _) in FILES.items():
        (tmp_path / name).write_text(text)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--no-progress", "--gpu", "V100", "--select", "PL302",
                                       "--output-format", "json", str(tmp_path)])
    findings = {Path(f["path"]).name: f["message"] for f in json.loads(result.output)}
    for name, (_, advice) in FILES.items():
        assert name in findings, (name, findings)
        assert findings[name].endswith(advice), (name, findings[name])
        if name not in ("trainer.toml",):
            assert "16-mixed" not in findings[name], (name, findings[name])


def test_a_message_names_the_framework_by_its_title(tmp_path: Path) -> None:
    """NeMo's Megatron trainer builder reads `trainer.precision` (MLCommons' mixtral8x22b recipe): the message
    names NeMo, not the internal name of the framework's table."""
    (tmp_path / "megatron_sft.yaml").write_text(
        "trainer:\n  devices: 8\n  accelerator: gpu\n  precision: bf16\n"
        "model:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 1\n  micro_batch_size: 1\n"
    )
    result = CliRunner().invoke(main, ["check", "--no-cache", "--no-progress", "--gpu", "V100", "--select", "PL302",
                                       "--output-format", "json", str(tmp_path)])
    [finding] = json.loads(result.output)
    assert finding["message"].startswith("bf16 (NeMo precision='bf16') on V100"), finding["message"]
