"""The link map: which files a file is read together with (Hydra defaults, script loads, launchers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from precisionlint.project.links import linked_files
from precisionlint.project.model import current


@pytest.fixture(autouse=True)
def _fresh() -> None:
    current().forget()
    yield
    current().forget()


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _names(root: Path, paths: list[str]) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


def test_hydra_defaults_forms(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "conf/config.yaml": (
            "defaults:\n"
            "  - _self_\n"
            "  - trainer: gpu\n"               # group/option beside the config
            "  - optional local: default\n"    # optional and missing: no link
            "  - logger: null\n"               # chosen at run time: no link
            "  - model@net: small\n"           # package syntax: the file is model/small.yaml
            "  - db: ${oc.env:DB}\n"           # interpolated: no link
            "  - base\n"                       # a config of the same group
            "  - .@encoder: base\n"            # '.' is the config's own group
            "  - /etc/passwd\n"                # the config root's etc/passwd.yaml, never the machine's
            "  - optional ../secrets\n"        # outside the config tree: no link
        ),
        "conf/trainer/gpu.yaml": "defaults:\n  - default\n  - override /model: large\nprecision: bf16-mixed\n",
        "conf/trainer/default.yaml": "accelerator: gpu\n",
        "conf/model/small.yaml": "width: 1\n",
        "conf/model/large.yaml": "width: 2\n",
        "conf/base.yaml": "seed: 1\n",
    })
    config = str(tmp_path / "conf/config.yaml")
    assert _names(tmp_path, linked_files(config)) == ["conf/trainer/gpu.yaml", "conf/model/small.yaml",
                                                        "conf/base.yaml"]
    # Inside a group: relative names stay in the group; `/model` starts from the config root.
    assert _names(tmp_path, linked_files(str(tmp_path / "conf/trainer/gpu.yaml"))) == [
        "conf/trainer/default.yaml", "conf/model/large.yaml"]


def test_hydra_searchpath(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "app/conf/config.yaml": "defaults:\n  - trainer: shared\nhydra:\n  searchpath:\n    - file://../../common\n",
        "common/trainer/shared.yaml": "precision: 16-mixed\n",
    })
    assert _names(tmp_path, linked_files(str(tmp_path / "app/conf/config.yaml"))) == ["common/trainer/shared.yaml"]


def test_hydra_composition_order_and_packages(tmp_path: Path) -> None:
    from precisionlint.project.hydra import compose, lookup
    from precisionlint.project.model import current

    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "conf/a.yaml": "defaults:\n  - trainer: gpu\n  - _self_\ntrainer:\n  precision: 32-true\n",
        "conf/b.yaml": "defaults:\n  - _self_\n  - trainer: gpu\ntrainer:\n  precision: 32-true\n",
        "conf/c.yaml": "defaults:\n  - trainer: gpu\n  - trainer/ddp@trainer: on\n",
        "conf/trainer/gpu.yaml": "precision: bf16-mixed\nstrategy:\n  _target_: x.DeepSpeedStrategy\n",
        "conf/trainer/ddp/on.yaml": "strategy: ddp\n",
    })
    results = {}
    for name in ("a", "b", "c"):
        path = str(tmp_path / f"conf/{name}.yaml")
        document = current().load_linked(path)
        assert document is not None
        view = compose(document, path, current().project_for(path))
        precision = lookup(view, "trainer.precision")
        target = lookup(view, "trainer.strategy._target_")
        results[name] = (precision.value if precision else None, target.value if target else None)
    assert results == {
        "a": ("32-true", "x.DeepSpeedStrategy"),  # the config's own keys after the defaults
        "b": ("bf16-mixed", "x.DeepSpeedStrategy"),  # `_self_` first: the default wins
        "c": ("bf16-mixed", None),  # a later file replaces the strategy by a plain value
    }


def test_script_loads(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "ds.json": "{}", "ds2.json": "{}", "hf.json": "{}", "args.yaml": "a: 1\n", "omega.yaml": "a: 1\n",
        "strategy.json": "{}",
        "train.py": (
            "import json, yaml, deepspeed\n"
            "from omegaconf import OmegaConf\n"
            "from transformers.integrations import HfDeepSpeedConfig\n"
            "from lightning.pytorch.strategies import DeepSpeedStrategy\n"
            "with open('ds.json') as f:\n"
            "    ds_config = json.load(f)\n"
            "engine, *_ = deepspeed.initialize(model=m, config=ds_config)\n"
            "deepspeed.initialize(model=m, config_params='ds2.json')\n"
            "dschf = HfDeepSpeedConfig('hf.json')\n"
            "args = yaml.safe_load(open('args.yaml'))\n"
            "cfg = OmegaConf.load('omega.yaml')\n"
            "s = DeepSpeedStrategy(config='strategy.json')\n"
            "deepspeed.initialize(model=m, config='missing.json')\n"
        ),
    })
    found = set(_names(tmp_path, linked_files(str(tmp_path / "train.py"))))
    assert found == {"ds.json", "ds2.json", "hf.json", "args.yaml", "omega.yaml", "strategy.json"}


def test_launcher_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "train.py": "print()\n", "ds.json": "{}", "acc.yaml": "mixed_precision: bf16\n",
        "run.sh": (
            "accelerate launch --config_file acc.yaml train.py\n"
            "deepspeed train.py --deepspeed --deepspeed_config ds.json\n"
            "torchrun train.py --deepspeed $CFG\n"
        ),
    })
    monkeypatch.chdir(tmp_path)
    assert _names(tmp_path, linked_files(str(tmp_path / "run.sh"))) == ["train.py", "acc.yaml", "ds.json"]
    assert os.path.isabs(linked_files("run.sh")[0])


# A training script with a literal autocast of the dtype filled in, for the launcher-and-script cache tests.
LAUNCHED_SCRIPT = (
    "import torch\n"
    "model = torch.nn.Linear(8, 8).cuda()\n"
    "optimizer = torch.optim.AdamW(model.parameters())\n"
    "for step in range(10):\n"
    "    with torch.autocast('cuda', dtype=torch.{dtype}):\n"
    "        loss = model(torch.randn(4, 8, device='cuda')).sum()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
)


def test_launcher_result_follows_the_script_it_starts(tmp_path: Path) -> None:
    """A launcher's findings depend on the script it starts: with the cache on, editing the script (and
    nothing else) changes the launcher's result."""
    import subprocess
    import sys

    script = LAUNCHED_SCRIPT
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "launch.sh": "torchrun --nproc_per_node 2 train.py --bf16\n",
        "train.py": script.format(dtype="float16"),
    })
    command = [sys.executable, "-m", "precisionlint", "check", "--select", "PL402", "--output-format", "json", "."]

    def codes() -> list[str]:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode in (0, 1), done.stderr
        import json

        return [f"{f['path']}:{f['code']}" for f in json.loads(done.stdout)]

    assert codes() == ["launch.sh:PL402"]
    (tmp_path / "train.py").write_text(script.format(dtype="bfloat16"))
    assert codes() == []


def test_nested_overrides_only_cut_what_they_reach(tmp_path: Path) -> None:
    """`override hydra/job_logging: x` inside hydra/default.yaml changes no group composed here: the view stays;
    an experiment that overrides `/trainer` (composed by the primary list) leaves only the config itself."""
    from precisionlint.project.hydra import compose
    from precisionlint.project.model import current

    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "conf/train.yaml": "defaults:\n  - trainer: gpu\n  - hydra: default\n  - _self_\n",
        "conf/train_exp.yaml": "defaults:\n  - trainer: gpu\n  - experiment: fast\n  - _self_\n",
        "conf/hydra/default.yaml": "defaults:\n  - override hydra_logging: colorlog\nrun:\n  dir: out\n",
        "conf/experiment/fast.yaml": "# @package _global_\ndefaults:\n  - override /trainer: cpu\n",
        "conf/trainer/gpu.yaml": "precision: bf16-mixed\n",
        "conf/trainer/cpu.yaml": "precision: 32-true\n",
    })
    views = {}
    for name in ("train", "train_exp"):
        path = str(tmp_path / f"conf/{name}.yaml")
        document = current().load_linked(path)
        assert document is not None
        composed = compose(document, path, current().project_for(path))
        views[name] = [(part.package, Path(part.path).name) for part in composed]
    assert views == {
        "train": [("trainer", "gpu.yaml"), ("hydra", "default.yaml"), ("", "train.yaml")],
        "train_exp": [("", "train_exp.yaml")],
    }


@pytest.mark.parametrize("launcher", ["a_launch.sh", "z_launch.sh"])
def test_a_cached_launcher_result_follows_a_rewrite_of_its_script_that_keeps_size_and_mtime(
    tmp_path: Path, launcher: str
) -> None:
    """The launcher's key names the stat of every script of the run, taken once per run and shared with the
    loop that reads the files (before the script is reached, or after): a rewrite of the script that keeps its
    size and puts its modification time back still moves its change time, and the launcher is checked again.
    Enough other files that the run uses the cache's file index too."""
    import json
    import subprocess
    import sys
    import time

    from precisionlint.core.racy_stat import RACY_SECONDS

    script = LAUNCHED_SCRIPT
    files = {f"pkg/m{i:02}.py": f"import torch\nx{i} = torch.zeros(1)\n" for i in range(40)}
    files.update({
        "pyproject.toml": "[project]\nname = 'x'\n",
        launcher: "torchrun --nproc_per_node 2 train.py --bf16\n",
        "train.py": script.format(dtype="float16"),
    })
    _write(tmp_path, files)
    command = [sys.executable, "-m", "precisionlint", "check", "--select", "PL402", "--output-format", "json", "."]

    def codes() -> list[str]:
        time.sleep(RACY_SECONDS + 0.05)  # old enough to be kept in the cache
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode in (0, 1), done.stderr
        return [f"{f['path']}:{f['code']}" for f in json.loads(done.stdout)]

    assert codes() == [f"{launcher}:PL402"]
    assert codes() == [f"{launcher}:PL402"]  # from the cache
    path = tmp_path / "train.py"
    before = path.stat()
    path.write_text(script.format(dtype="float32"))  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert codes() == []


def test_a_file_that_says_deepspeed_but_builds_no_training_arguments_is_not_walked_for_them() -> None:
    """TrainingArguments(deepspeed=...) is matched by the class name written at the call, so a file that never
    writes one (DeepSpeed's or Lightning's own code) is not walked for it; one that does is."""
    import ast

    from precisionlint.core.model import Document
    from precisionlint.project.links import python_links

    strategy = "import deepspeed\n\nclass Strategy:\n    def setup(self):\n        deepspeed.initialize(model=m)\n"
    document = Document("strategy.py", strategy, "python", tree=ast.parse(strategy))
    assert list(python_links(document)) == []
    assert document.python_index is None
    script = "from transformers import TrainingArguments as TA, TrainingArguments\n" \
             "args = TrainingArguments('out', deepspeed='ds_config.json', fp16=True)\n"
    document = Document("train.py", script, "python", tree=ast.parse(script))
    assert [link.link.literal for link in python_links(document)] == ["ds_config.json"]
