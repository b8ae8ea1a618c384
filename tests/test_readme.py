"""README.md stays true: its rule table is the registry's, its two set-up commands are the ones CI runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from precisionlint.checks import all_rules
from precisionlint.cli.commands import rules_markdown

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_rule_table_is_generated_from_the_registry() -> None:
    match = re.search(r"<!-- rules-table -->\n(.*?)<!-- /rules-table -->", README, re.DOTALL)
    assert match, "README.md lacks the rules-table markers"
    assert match.group(1) == rules_markdown(all_rules()), (
        "README rule table is stale: run `precisionlint rules --output-format markdown` and paste it"
    )


def test_readme_has_the_two_setup_commands() -> None:
    for marker in ("main-command", "test-command"):
        assert f"<!-- {marker} -->" in README
    main_block = README.split("<!-- main-command -->")[1].split("<!-- /main-command -->")[0]
    assert "precisionlint check examples/project" in main_block
    test_block = README.split("<!-- test-command -->")[1].split("<!-- /test-command -->")[0]
    assert "pytest" in test_block and "torch==2.13.0" in test_block


ROOT = Path(__file__).resolve().parent.parent


def _block(marker: str) -> str:
    return README.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The console script's code, in its own process, from `cwd` (as a user runs `precisionlint ARGS` there)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_test_command_is_the_line_ci_runs() -> None:
    """.ci/run extracts the test command with sed and runs it; the extraction must give exactly that one line."""
    script = (ROOT / ".ci" / "run").read_text()
    extraction = re.search(r"test_command=\$\((.*)\)\n", script)
    assert extraction, ".ci/run no longer extracts the README's test command"
    extracted = subprocess.run(["bash", "-c", extraction.group(1)], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.strip()
    assert extracted == _block("test-command").strip().strip("`").strip()
    assert extracted.endswith("python3 -m pytest -q")


def test_every_usage_line_runs_as_written(tmp_path: Path) -> None:
    """The usage block, run from a copy of the clone's example project (`--fix` writes), in order: each command
    exits 0 or 1 (never a usage or internal error), and the first one reports the example's findings."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    lines = [line.split("  #")[0].strip() for line in _block("usage").splitlines() if line.startswith("precisionlint ")]
    assert len(lines) >= 10
    # Run from a clone, --fix must not edit a tracked file: the example shows it on a copy.
    assert not any("--fix" in line and "examples/" in line and "--diff" not in line for line in lines)
    for index, line in enumerate(lines):
        result = _run(shlex.split(line)[1:], tmp_path)
        assert result.returncode in (0, 1), f"{line}: exit {result.returncode}\n{result.stderr}"
        assert "Traceback" not in result.stderr and "error:" not in result.stderr, f"{line}\n{result.stderr}"
        if index == 0:
            assert line == "precisionlint check examples/project"
            assert result.returncode == 1 and "Found " in result.stdout


def test_the_json_example_is_what_check_prints() -> None:
    block = _block("json-example").split("```json")[1].split("```")[0]
    command = "precisionlint check --output-format json examples/project/configs/lightning.yaml"
    assert f"`{command}` prints:" in " ".join(README.split())
    result = _run(command.split()[1:], ROOT)
    assert json.loads(result.stdout) == json.loads(block)
