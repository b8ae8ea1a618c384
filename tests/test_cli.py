"""The real CLI, end to end: exit codes, every output format, selection, configuration, suppression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from precisionlint.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "project"

MIXED_TF32 = '[trainer_config]\nprecision = "16-mixed"\ntf32_matmul_precision = "high"\n'
CLEAN = '[trainer_config]\nprecision = "bf16-mixed"\n'


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "precisionlint", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mixed.toml").write_text(MIXED_TF32)
    (tmp_path / "configs" / "clean.toml").write_text(CLEAN)
    return tmp_path


def test_exit_code_1_on_findings_and_0_when_clean(project: Path) -> None:
    assert run(["check", "configs/mixed.toml"], project).returncode == 1
    clean = run(["check", "configs/clean.toml"], project)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "All checks passed!" in clean.stdout


def test_text_output_has_path_line_column_code(project: Path) -> None:
    result = run(["check", "configs"], project)
    assert "configs/mixed.toml:3:25: PL104 [warning]" in result.stdout
    assert "Found 1 finding" in result.stdout


def test_json_output_fields(project: Path) -> None:
    result = run(["check", "--output-format", "json", "configs"], project)
    data = json.loads(result.stdout)
    assert result.returncode == 1
    assert [set(item) for item in data] == [
        {"schema_version", "code", "name", "severity", "path", "line", "column", "end_line", "end_column",
         "message", "fix", "notes"}
    ]
    item = data[0]
    assert item["notes"] == ["autocast already runs matmuls in float16; the setting only reaches float32 matmuls "
                             "outside autocast"]
    assert (item["code"], item["name"], item["severity"]) == ("PL104", "tf32-ignored-under-mixed-precision", "warning")
    assert (item["path"], item["line"], item["column"], item["end_line"], item["end_column"]) == (
        "configs/mixed.toml", 3, 25, 3, 31)


def test_github_output(project: Path) -> None:
    result = run(["check", "--output-format", "github", "configs/mixed.toml"], project)
    assert result.stdout.startswith("::warning file=configs/mixed.toml,line=3,col=25,")
    assert "title=PL104 tf32-ignored-under-mixed-precision::" in result.stdout


def test_sarif_output_validates(project: Path) -> None:
    import jsonschema  # a test dependency (the "test" extra): the validation always runs

    # The OASIS schema, vendored (tests/schemas/), so that a fresh clone validates without a network.
    schema_path = ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json"
    result = run(["check", "--output-format", "sarif", "configs"], project)
    sarif = json.loads(result.stdout)
    schema = json.loads(schema_path.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)
    assert [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]] == ["PL104"]


def test_fail_on_and_exit_zero(project: Path) -> None:
    assert run(["check", "--fail-on", "error", "configs"], project).returncode == 0
    assert run(["check", "--exit-zero", "configs"], project).returncode == 0
    assert run(["check", "--fail-on", "info", "configs"], project).returncode == 1


def test_select_and_ignore_by_name_code_and_prefix(project: Path) -> None:
    assert run(["check", "--ignore", "tf32-ignored-under-mixed-precision", "configs"], project).returncode == 0
    assert run(["check", "--ignore", "PL104", "configs"], project).returncode == 0
    assert run(["check", "--select", "PL00", "configs"], project).returncode == 0
    assert run(["check", "--select", "PL1", "configs"], project).returncode == 1


def test_unknown_selector_is_a_usage_error(project: Path) -> None:
    result = run(["check", "--select", "tf32-ignored", "configs"], project)
    assert result.returncode == 2
    assert "unknown rule or code 'tf32-ignored'" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_path_is_an_error_but_other_files_are_checked(project: Path) -> None:
    result = run(["check", "nope.yaml", "configs/mixed.toml"], project)
    assert result.returncode == 2
    assert "nope.yaml: no such file or directory" in result.stderr
    assert "PL104" in result.stdout


def test_parse_error_does_not_stop_the_run(project: Path) -> None:
    (project / "configs" / "broken.yaml").write_text("trainer:\n  precision: [16-mixed\n")
    result = run(["check", "configs"], project)
    assert "configs/broken.yaml:3:1: PL001 [error]" in result.stdout
    assert "PL104" in result.stdout
    assert result.returncode == 1
    assert "Traceback" not in result.stderr


def test_pyproject_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.precisionlint]\nignore = ["PL104"]\nper-file-ignores = { "legacy/*" = ["legacy-precision-value"] }\n'
    )
    (project / "legacy").mkdir()
    (project / "legacy" / "old.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    result = run(["check", "."], project)
    assert result.returncode == 0, result.stdout


def test_pyproject_unknown_key_and_wrong_type(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nselekt = ["ALL"]\n')
    result = run(["check", "configs"], project)
    assert result.returncode == 2
    assert "unknown key 'selekt'" in result.stderr and "did you mean 'select'" in result.stderr
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nfail-on = 3\n')
    result = run(["check", "configs"], project)
    assert result.returncode == 2 and "'fail-on'" in result.stderr


def test_explicit_config_file(project: Path) -> None:
    (project / "lint.toml").write_text('fail-on = "error"\n')
    assert run(["check", "--config", "lint.toml", "configs"], project).returncode == 0
    assert run(["check", "--config", "missing.toml", "configs"], project).returncode == 2


def test_suppression_comments(project: Path) -> None:
    (project / "configs" / "mixed.toml").write_text(
        '[trainer_config]\nprecision = "16-mixed"\n'
        'tf32_matmul_precision = "high"  # precisionlint: ignore[tf32-ignored-under-mixed-precision]\n'
    )
    assert run(["check", "configs/mixed.toml"], project).returncode == 0


def test_gitignore_is_honoured_in_a_git_work_tree(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("configs/mixed.toml\n")
    assert run(["check", "."], project).returncode == 0
    # ...but a file named on the command line is always checked.
    assert run(["check", "configs/mixed.toml"], project).returncode == 1


def test_default_excludes_when_walking(project: Path) -> None:
    venv = project / ".venv" / "lib"
    venv.mkdir(parents=True)
    (project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "mixed.toml").write_text(MIXED_TF32)
    (project / "configs" / "mixed.toml").unlink()
    assert run(["check", "."], project).returncode == 0


@pytest.mark.parametrize("in_git", [False, True])
def test_the_user_s_folders_are_never_skipped_by_their_name(project: Path, in_git: bool) -> None:
    """A Hydra config group `env/`, a package `wandb/` and a `build/` package are the project's; a virtual
    environment (by its pyvenv.cfg, whatever its name) and W&B run records are not, and --show-files says so."""
    if in_git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "configs" / "mixed.toml").unlink()
    files = {"configs/env/cluster.toml": MIXED_TF32, "wandb/settings.toml": MIXED_TF32,
             "build/model.toml": MIXED_TF32, "tools/pyvenv.cfg": "home = /usr/bin\n",
             "tools/lib/mixed.toml": MIXED_TF32, "outputs/wandb/run-20240101_000000-abc/files/config.toml": MIXED_TF32}
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    shown = run(["check", "--show-files", "."], project)
    assert shown.stdout.split() == ["build/model.toml", "configs/clean.toml", "configs/env/cluster.toml",
                                    "wandb/settings.toml"]
    assert "skipped tools/: a virtual environment (pyvenv.cfg)" in shown.stderr
    assert "skipped outputs/wandb/: Weights & Biases run records" in shown.stderr


@pytest.mark.parametrize("in_git", [False, True])
def test_project_templates_are_not_walked(project: Path, in_git: bool) -> None:
    """A cookiecutter template (transformers' `templates/`, copied into many repositories) holds Jinja text in
    `.py` files under `{{cookiecutter.name}}` folders and names; read as Python it is a syntax error the project
    does not have. Named on the command line, such a file is still checked."""
    if in_git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "configs" / "mixed.toml").unlink()
    template = project / "templates" / "{{cookiecutter.directory_name}}"
    template.mkdir(parents=True)
    body = "from transformers import (\n    {{cookiecutter.model_class}},\n)\n# fp16 autocast\n"
    (template / "run.py").write_text(body)
    (project / "templates" / "run_{{cookiecutter.example_shortcut}}.py").write_text(body)
    (project / "templates" / "mixed_{{ name }}.toml").write_text(MIXED_TF32)
    result = run(["check", "--no-cache", "."], project)
    assert result.returncode == 0, result.stdout + result.stderr
    named = run(["check", "--no-cache", "templates/run_{{cookiecutter.example_shortcut}}.py"], project)
    assert named.returncode == 1 and "PL001" in named.stdout


def test_rule_and_rules_commands() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["rule", "PL104"])
    assert result.exit_code == 0
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"):
        assert section in result.output
    assert runner.invoke(main, ["rule", "static-loss-scale"]).exit_code == 0
    prefix = runner.invoke(main, ["rule", "static-loss"])  # a name prefix finds the rule
    assert prefix.exit_code == 0 and prefix.output.startswith("# static-loss-scale (PL106)")
    unknown = runner.invoke(main, ["rule", "static-los-scale"])
    assert unknown.exit_code == 2 and "static-loss-scale" in unknown.output
    listing = json.loads(runner.invoke(main, ["rules", "--output-format", "json"]).output)
    assert {"code", "name", "severity", "summary", "fixable", "needs_gpu", "default", "applies_to",
            "reads"} == set(listing[0])
    legacy = next(item for item in listing if item["name"] == "legacy-precision-value")
    assert legacy["reads"] == ["lightning", "pins"] and legacy["applies_to"] == "Lightning, version pins"
    text = runner.invoke(main, ["rules"]).output.splitlines()
    assert next(line for line in text if line.startswith("PL105")).endswith("(reads: Transformers, DeepSpeed)")
    assert sum("off by default" in line for line in text if line.startswith("PL007")) == 1
    markdown = runner.invoke(main, ["rules", "--output-format", "markdown"]).output.splitlines()
    assert markdown[0] == "| Code | Name | Severity | Fix | Summary | Reads |"
    assert next(line for line in markdown if "`static-loss-scale`" in line).endswith("| DeepSpeed, MMEngine |")


def test_example_project_reports_its_mistakes() -> None:
    result = run(["check", "--output-format", "json", "examples/project"], ROOT)
    names = {item["name"] for item in json.loads(result.stdout)}
    assert {"tf32-ignored-under-mixed-precision", "legacy-precision-value", "conflicting-precision",
            "static-loss-scale"} <= names
    assert result.returncode == 1


def test_check_never_imports_torch(project: Path) -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['precisionlint', 'check', '--exit-zero', 'configs']\n"
        "try:\n    runpy.run_module('precisionlint', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print('ok')\n"
    )
    (project / "train.py").write_text("import torch\nwith torch.autocast('cuda'):\n    y = model(x)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().endswith("ok"), result.stderr

