"""Shell launch scripts: commands, scripts and precision flags read with shlex (never executed), with spans."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from precisionlint.core.model import UNRESOLVED
from precisionlint.frameworks.documents import load_document
from precisionlint.sources import Limits, format_of

LAUNCHER = """#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1
CFG=configs/ds.json
accelerate launch --num_processes 2 --mixed_precision bf16 \\
    train.py --lr 1e-4  # a comment --fp16
deepspeed --num_gpus 8 train_hf.py --deepspeed ds_config.json --bf16 True --output_dir out
torchrun --nproc_per_node=4 train.py --precision=16-mixed --deepspeed $CFG
nohup python -u finetune.py --fp16 && echo done
python -m torch.distributed.run --nproc_per_node 2 train.py --bf16
python -m my_package.train --mixed-precision fp16
echo "python fake.py --fp16"
pip install "torch>=2.1"
"""


def _launches(text: str):
    return load_document("launch.sh", text, "shell").tree


def test_sh_files_are_a_format() -> None:
    assert format_of("scripts/launch.sh") == "shell"


def test_launchers_scripts_and_flags() -> None:
    launches = _launches(LAUNCHER)
    assert [(x.launcher, x.script, x.module) for x in launches] == [
        ("accelerate", "train.py", None),
        ("deepspeed", "train_hf.py", None),
        ("torchrun", "train.py", None),
        ("python", "finetune.py", None),
        ("torchrun", "train.py", None),
        ("python", None, "my_package.train"),
    ]
    accelerate, deepspeed, torchrun, python, distributed, module = launches
    assert accelerate.launcher_flags["mixed_precision"].value == "bf16"
    assert tuple(accelerate.launcher_flags["mixed_precision"].span)[:2] == (4, 55)
    assert "fp16" not in accelerate.script_flags  # in a comment
    assert deepspeed.script_flags["deepspeed"].value == "ds_config.json"
    assert deepspeed.script_flags["bf16"].value == "True"
    assert torchrun.script_flags["precision"].value == "16-mixed"
    assert torchrun.script_flags["deepspeed"].value is UNRESOLVED
    assert python.script_flags["fp16"].value is True
    assert distributed.script_flags["bf16"].value is True
    assert module.script_flags["mixed_precision"].value == "fp16"


def test_module_launches_of_each_launcher() -> None:
    """`-m`/`--module` starts a module under every launcher; the options after it are the module's."""
    launches = _launches("torchrun --nproc_per_node 8 -m pkg.train --precision bf16\n"
                         "accelerate launch --num_processes 2 -m pkg.train --bf16\n"
                         "deepspeed --num_gpus 8 --module pkg.train --fp16\n"
                         "python --module pkg.train --fp16\n")  # python itself has no --module switch
    assert [(x.launcher, x.script, x.module) for x in launches] == [
        ("torchrun", None, "pkg.train"), ("accelerate", None, "pkg.train"), ("deepspeed", None, "pkg.train")]
    assert [x.script_flags.keys() - {"nproc_per_node"} for x in launches] == [{"precision"}, {"bf16"}, {"fp16"}]


def test_unterminated_quotes_and_odd_lines_are_not_errors() -> None:
    assert _launches('python train.py --fp16 "unterminated\nfor x in 1 2; do echo $x; done\n') == []


def test_launcher_conflict_in_json_output_carries_the_related_location(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}, "bf16": {"enabled": false}}\n')
    (tmp_path / "train.py").write_text("import transformers\n")
    (tmp_path / "run.sh").write_text("deepspeed train.py --deepspeed ds.json --bf16\n")
    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--output-format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    findings = [f for f in json.loads(result.stdout) if f["code"] == "PL402"]
    assert len(findings) == 1
    assert (findings[0]["path"], findings[0]["line"], findings[0]["column"]) == ("run.sh", 1, 40)
    assert findings[0]["related"] == [
        {"path": "ds.json", "line": 1, "column": 49, "end_line": 1, "end_column": 54,
         "message": "DeepSpeed `bf16.enabled=false`"}
    ]


def test_sarif_carries_related_locations(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}, "bf16": {"enabled": false}}\n')
    (tmp_path / "train.py").write_text(
        'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o", bf16=True, '
        'deepspeed="ds.json")\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--select", "PL402",
         "--output-format", "sarif", "train.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    [finding] = json.loads(result.stdout)["runs"][0]["results"]
    [related] = finding["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "ds.json"
    assert related["physicalLocation"]["region"]["startLine"] == 1
    assert related["message"]["text"] == "DeepSpeed `fp16.enabled=true`"
    assert "ds.json:1" in finding["message"]["text"]


def _every_line_tokenized(text: str) -> list[Any]:
    """The launches of `text` with every logical line tokenized (the loader tokenizes only the lines that can
    name a launcher)."""
    from precisionlint.core.model import Document
    from precisionlint.sources import shell_source

    document = Document(path="run.sh", text=text, format="shell", tree=None)
    commands: list[Any] = []
    current: list[Any] = []
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        continued = line.endswith("\\") and not line.endswith("\\\\")
        current.extend(shell_source._tokens(line[:-1] if continued else line, offset))
        offset += len(raw)
        if not continued:
            if current:
                commands.extend(shell_source._split_commands(current))
            current = []
    if current:
        commands.extend(shell_source._split_commands(current))
    return [launch for tokens in commands if (launch := shell_source._launch(document, tokens)) is not None]


_SHELL_PIECES = ["python", "py", "thon", "python3.10", "/usr/bin/python", "torchrun", "deepspeed", "accelerate",
                 "launch", "-m", "torch.distributed.run", "train.py", "--fp16", "--bf16", "True", "--deepspeed",
                 "ds.json", "--mixed_precision=bf16", "X=1", "nohup", " ", " ", "\t", "\\\n", "\n", "'", '"', "\\",
                 ";", "&&", "|", "#", "$CFG", "echo"]


_LAUNCHERS = ["python", "python3.10", "/usr/bin/python", "torchrun", "deepspeed", "accelerate launch",
              "python -m torch.distributed.run", "python -m accelerate.commands.launch launch"]


@st.composite
def _commands(draw: st.DrawFn) -> str:
    """A launch command, its launcher words broken up by quotes and backslashes that shlex removes (or keeps,
    inside other quotes), with other words and lines around it."""
    launcher = draw(st.sampled_from(_LAUNCHERS))
    broken = []
    for char in launcher:
        broken.append(draw(st.sampled_from(["", "", "", "'", '"', "\\", "''", '""', "\\\n"])) + char)
    words = draw(st.lists(st.sampled_from(_SHELL_PIECES), max_size=6))
    tail = draw(st.lists(st.sampled_from(_SHELL_PIECES), max_size=6))
    return "".join(words) + " " + "".join(broken) + " train.py " + "".join(tail)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_SHELL_PIECES), _commands()), max_size=10))
def test_only_lines_that_can_launch_are_tokenized(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert load_document("run.sh", text, "shell", Limits()).tree == _every_line_tokenized(text)


def test_hydra_overrides_and_ray_job_submit() -> None:
    text = (
        'ray job submit --address="http://127.0.0.1:8265" -- \\\n'
        "    python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n"
        "    +actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype=bf16 \\\n"
        "    actor_rollout_ref.rollout.dtype=float16 trainer.n_gpus=$N --out a.b=c ~x.y\n"
    )
    [launch] = _launches(text)
    assert (launch.launcher, launch.module) == ("python", "verl.trainer.main_ppo")
    assert launch.script_flags["config_name"].value == "ppo_megatron_trainer"
    overrides = launch.overrides
    assert set(overrides) == {"actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype",
                              "actor_rollout_ref.rollout.dtype", "trainer.n_gpus"}  # not an option's value
    rollout = overrides["actor_rollout_ref.rollout.dtype"]
    assert rollout.value == "float16"
    assert text.splitlines()[rollout.span.line - 1][rollout.span.column - 1:rollout.span.end_column - 1] == "float16"
    assert overrides["trainer.n_gpus"].value is UNRESOLVED


def test_dotted_flags_of_openrlhf() -> None:
    [launch] = _launches("python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 4 --ds.param_dtype fp16\n")
    assert launch.script_flags["vllm.num_engines"].value == "4"
    assert launch.script_flags["ds.param_dtype"].value == "fp16"
    assert launch.overrides == {}
