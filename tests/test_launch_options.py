"""A launch line's words read as the started script's argparse or click parser reads them (real files, the real CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from precisionlint.core.model import UNRESOLVED
from precisionlint.frameworks.documents import load_document
from precisionlint.project.launch_options import Option, flag_value

SCRIPT = """import argparse

import lightning as L

parser = argparse.ArgumentParser()
parser.add_argument("--precision", "-p", default="32-true")
args = parser.parse_args()
L.Trainer(precision=args.precision)
"""


SCRIPT_ACCELERATE = """import argparse

from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", default=None, choices=["no", "fp16", "bf16"])
args = parser.parse_args()
accelerator = Accelerator(mixed_precision=args.mixed_precision)
"""


def _words(line: str):
    (launch,) = load_document("run.sh", line + "\n", "shell").tree
    return launch.script_words


def _option(**changes) -> Option:
    base = Option(("--precision", "-p"), None, None, None, None, True)  # type: ignore[arg-type]
    return base._replace(**changes)


@pytest.mark.parametrize(("line", "expected"), [
    ("python train.py --precision 16", "16"),
    ("python train.py -p bf16-mixed", "bf16-mixed"),
    ("python train.py --precision=16 --precision 32", "32"),  # the last one wins, as in argparse
    ('python train.py --precision="bf16-mixed"', "bf16-mixed"),
    ("python train.py --precision", None),  # argparse: expected one argument
    ("python train.py --precision --epochs 3", None),
    ("python train.py -- --precision 16", None),  # after `--` the words are positional
    ("python train.py --precision-level 16", None),  # another option
])
def test_a_value_option(line: str, expected: object) -> None:
    found = flag_value(_option(), _words(line))
    assert (found[0] if found else None) == expected


def test_a_shell_variable_stays_unknown() -> None:
    found = flag_value(_option(), _words('python train.py --precision "$PRECISION"'))
    assert found is not None and found[0] is UNRESOLVED


def test_conversions_and_choices_as_argparse_applies_them() -> None:
    assert flag_value(_option(convert=int), _words("python train.py --precision 16"))[0] == 16  # type: ignore[index]
    assert flag_value(_option(convert=int), _words("python train.py --precision bf16")) is None  # refused
    choices = _option(choices=("16-mixed", "bf16-mixed"))
    assert flag_value(choices, _words("python train.py --precision 16")) is None  # invalid choice: refused
    assert flag_value(_option(store=True), _words("python train.py --precision 16"))[0] is True  # type: ignore[index]


def test_accelerate_launch_mixed_precision_reaches_an_accelerator_that_leaves_it(tmp_path: Path) -> None:
    """The launcher's `--mixed_precision` is the run's precision where the script's option defaults to None and the
    line does not give it; where the line gives the script's own option, that wins (no launcher setting)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / "train.py").write_text(SCRIPT_ACCELERATE)
    (tmp_path / "run.sh").write_text("accelerate launch --mixed_precision bf16 train.py\n"
                                     "accelerate launch --mixed_precision bf16 train.py --mixed_precision fp16\n"
                                     "accelerate launch --mixed_precision $MP train.py\n")
    result = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-cache", "--gpu", "T4",
                             "--output-format", "json", "run.sh"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert [(f["code"], f["line"], f["column"]) for f in findings] == [("PL302", 1, 37)]
    assert findings[0]["fix"] is None  # the value is the launch line's, in the shell's words


def test_a_config_value_its_launch_line_replaces_is_read_not_unchecked(tmp_path: Path) -> None:
    """`--trainer.precision` on the LightningCLI line replaces the config's value: the config was read (its reader
    is certain), so the summary does not count it among the configs no framework was identified to read."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / "main.py").write_text("from lightning.pytorch.cli import LightningCLI\n\nLightningCLI()\n")
    (tmp_path / "fit.yaml").write_text("trainer:\n  precision: 16\n")
    (tmp_path / "run.sh").write_text("python main.py fit --config fit.yaml --trainer.precision 16-mixed\n")

    def check(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-cache", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120).stdout

    assert "Not checked" not in check(".")
    assert "fit.yaml: `trainer.precision` is read by run.sh:1 into lightning.Trainer (LightningCLI in main.py), " \
           "which replaces its value" in check("--show-frameworks", "fit.yaml")
    (tmp_path / "run.sh").write_text("python main.py fit --config fit.yaml\n")  # now the file's 16 is what runs
    assert "fit.yaml:2:14: PL102" in check(".", "--output-format", "concise")
