"""The click-free fast path of `check` parses exactly as the click command does, and hands click every case
it does not fully understand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from precisionlint.cli.check_options import OPTIONS, parse_fast
from precisionlint.cli.commands import check

AGREE = [
    [],
    ["configs"],
    ["a.toml", "b.yaml", "--select", "PL1", "--select=PL2,PL3", "--ignore", "PL104"],
    ["--output-format", "json", "--fail-on", "info", "--exit-zero", "."],
    ["--output-format=sarif", "--gpu", "A100", "--gpu=H100", "--jobs", "3", "x.py"],
    ["-j", "2", "--fix", "--unsafe-fixes", "--diff", "--force-exclude", "--no-color", "--no-progress"],
    ["--config", "lint.toml", "--", "--weird-name.yaml"],
]
FALL_BACK = [
    ["--help"],
    ["-h"],
    ["--selekt", "PL1"],
    ["--output-format", "xml"],
    ["--fail-on", "fatal"],
    ["--jobs", "0"],
    ["--jobs", "many"],
    ["-j4"],
    ["--fix=yes"],
    ["--select"],
    ["--config", "."],
]


def click_values(argv: list[str]) -> dict:
    ctx = check.make_context("check", list(argv))
    return dict(ctx.params)


@pytest.mark.parametrize("argv", AGREE, ids=lambda a: " ".join(a) or "(none)")
def test_fast_parser_agrees_with_click(argv: list[str]) -> None:
    assert parse_fast(argv) == click_values(argv)


@pytest.mark.parametrize("argv", FALL_BACK, ids=lambda a: " ".join(a))
def test_fast_parser_leaves_the_rest_to_click(argv: list[str]) -> None:
    assert parse_fast(argv) is None


def test_every_option_is_in_the_click_command() -> None:
    click_flags = {flag for param in check.params for flag in getattr(param, "opts", [])}
    assert {flag for option in OPTIONS for flag in option.flags} <= click_flags


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=60)


def test_a_plain_check_never_imports_click(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('[trainer_config]\nprecision = "16"\n')
    code = (
        "import sys\nsys.argv = ['precisionlint', 'check', '--no-progress', 'c.toml']\n"
        "from precisionlint.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
        "print('click' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().splitlines()[-2:] == ["exit 1", "False"], result.stdout + result.stderr


def test_usage_errors_still_come_from_click(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('[trainer_config]\nprecision = "16"\n')
    result = run(["check", "--select", "tf32-ignored", "c.toml"], tmp_path)
    assert result.returncode == 2
    assert "Usage:" in result.stderr and "unknown rule or code 'tf32-ignored'" in result.stderr
    assert result.stdout == ""
    gpu = run(["check", "--gpu", "A1000000", "c.toml"], tmp_path)
    assert gpu.returncode == 2 and "Usage:" in gpu.stderr
    assert run(["check", "--help"], tmp_path).stdout.startswith("Usage:")
