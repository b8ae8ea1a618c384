"""A newcomer's first hour, through the real CLI (a subprocess, or click's runner where noted): summaries,
configuration per file, selection, suppressions, output formats, standard input, rule lookup, GPUs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MIXED_TF32 = '[trainer_config]\nprecision = "16-mixed"\ntf32_matmul_precision = "high"\n'
LEGACY_YAML = "trainer:\n  precision: 16\n  max_epochs: 3\n  _target_: lightning.pytorch.Trainer\n"
CLEAN = '[trainer_config]\nprecision = "bf16-mixed"\n'


def run(args: list[str], cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(env or {"NO_COLOR": "1"})
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=environment, timeout=120, input=stdin)


# --- summaries ---------------------------------------------------------------------------------------------


def test_summary_counts_files_and_never_passes_beside_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(MIXED_TF32)
    (tmp_path / "b.toml").write_text(CLEAN)
    found = run(["check", "."], tmp_path)
    assert found.returncode == 1
    assert "Found 1 finding (0 errors, 1 warning, 0 info) in 2 files checked." in found.stdout
    clean = run(["check", "b.toml"], tmp_path)
    assert clean.returncode == 0 and "All checks passed! (1 file checked)" in clean.stdout
    missing = run(["check", "nope.toml"], tmp_path)
    assert missing.returncode == 2 and "All checks passed" not in missing.stdout
    # The error says it; a "No files to check." after it would read as a second, different problem.
    assert missing.stdout == "" and missing.stderr == "precisionlint: error: nope.toml: no such file or directory\n"
    partly = run(["check", "b.toml", "nope.toml"], tmp_path)
    assert partly.returncode == 2 and "All checks passed" not in partly.stdout
    assert "No findings in 1 file checked" in partly.stdout
    (tmp_path / "empty").mkdir()
    empty = run(["check", "empty"], tmp_path)
    assert empty.returncode == 0 and empty.stdout.strip() == "No files to check."


# --- configuration -----------------------------------------------------------------------------------------


def test_configuration_is_found_from_each_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nignore = ["PL104"]\n')
    (project / "a.toml").write_text(MIXED_TF32)
    (project / "sub" / "precisionlint.toml").write_text('select = ["PL104"]\n')
    (project / "sub" / "b.toml").write_text(MIXED_TF32)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / ".precisionlint.toml").write_text('extend-ignore = ["tf32-ignored-under-mixed-precision"]\n')
    (tmp_path / "other" / "c.toml").write_text(MIXED_TF32)
    # Run from outside every project: each file still gets its own configuration.
    result = run(["check", "--output-format", "json", "project", "other"], tmp_path)
    paths = [item["path"] for item in json.loads(result.stdout)]
    assert paths == ["project/sub/b.toml"], result.stdout + result.stderr
    settings = run(["check", "--show-settings", "project/sub/b.toml"], tmp_path)
    assert settings.returncode == 0
    assert f"Configuration: {(project / 'sub' / 'precisionlint.toml').resolve()}" in settings.stdout
    assert "Rules (1): PL104 tf32-ignored-under-mixed-precision" in settings.stdout
    files = run(["check", "--show-files", "project"], tmp_path)
    assert files.stdout.splitlines() == ["project/a.toml", "project/pyproject.toml", "project/sub/b.toml",
                                         "project/sub/precisionlint.toml"]
    # --config names one file for everything.
    forced = run(["check", "--config", "project/pyproject.toml", "--output-format", "json", "project"], tmp_path)
    assert json.loads(forced.stdout) == []


def test_extend_select_and_extend_ignore(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.precisionlint]\nselect = ["PL2"]\nextend-select = ["PL104"]\n')
    (tmp_path / "a.toml").write_text(MIXED_TF32)
    (tmp_path / "b.yaml").write_text(LEGACY_YAML)
    names = lambda r: sorted(item["name"] for item in json.loads(r.stdout))  # noqa: E731
    assert names(run(["check", "--output-format", "json", "."], tmp_path)) == ["tf32-ignored-under-mixed-precision"]
    both = run(["check", "--output-format", "json", "--extend-select", "PL102", "."], tmp_path)
    assert names(both) == ["legacy-precision-value", "tf32-ignored-under-mixed-precision"]
    less = run(["check", "--output-format", "json", "--extend-select", "PL102", "--extend-ignore", "PL104", "."],
               tmp_path)
    assert names(less) == ["legacy-precision-value"]


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('fail-on = "error"\nfail_on = "info"\n', "gives 'fail-on' and 'fail_on'"),
        ('per-file-ignores = { "a/[b.yaml" = ["PL104"] }\n', "invalid glob 'a/[b.yaml': unclosed '['"),
        ('per-file-ignores = { "a**b/*.yaml" = ["PL104"] }\n', "'**' must be a whole path component"),
        ('select = ["PL104", "legacy-precison-value"]\n', "select: unknown rule or code 'legacy-precison-value'"),
        ('gpus = ["H1OO"]\n', "gpus: unknown GPU 'H1OO'"),
        ('selekt = ["PL1"]\n', "unknown key 'selekt' in [tool.precisionlint] (did you mean 'select'?)"),
    ],
)
def test_configuration_errors_name_the_file_and_the_key(tmp_path: Path, table: str, expected: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\n" + table)
    (tmp_path / "a.toml").write_text(MIXED_TF32)
    result = run(["check", "a.toml"], tmp_path)
    assert result.returncode == 2, result.stdout
    assert str((tmp_path / "pyproject.toml").resolve()) in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr and "Usage:" not in result.stderr


def test_per_file_ignores_use_gitignore_globs(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.precisionlint]\nper-file-ignores = { "**/*.yaml" = ["legacy-precision-value"] }\n')
    (tmp_path / "root.yaml").write_text(LEGACY_YAML)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "x.yaml").write_text(LEGACY_YAML)
    (tmp_path / "kept.toml").write_text('[trainer_config]\nprecision = "16"\n')
    result = run(["check", "--output-format", "json", "."], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == ["kept.toml"]


# --- suppressions ------------------------------------------------------------------------------------------


def test_unknown_rule_in_a_directive_is_reported_with_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("trainer:\n  precision: 16  # precisionlint: ignore[legacy-precison-value]\n"
                                     "  _target_: lightning.pytorch.Trainer\n")
    result = run(["check", "a.yaml"], tmp_path)
    assert result.returncode == 1
    assert "PL006" in result.stdout and "did you mean legacy-precision-value" in result.stdout
    assert "PL102" in result.stdout  # the finding it meant to hide stays


def test_unused_suppression_is_opt_in_and_its_fix_removes_it(tmp_path: Path) -> None:
    text = '[trainer_config]\nprecision = "bf16-mixed"  # precisionlint: ignore[legacy-precision-value]\n'
    (tmp_path / "a.toml").write_text(text)
    assert run(["check", "a.toml"], tmp_path).returncode == 0  # off by default
    found = run(["check", "--extend-select", "unused-suppression", "a.toml"], tmp_path)
    assert found.returncode == 1 and "PL007" in found.stdout and "[*]" in found.stdout
    fixed = run(["check", "--extend-select", "unused-suppression", "--fix", "a.toml"], tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (tmp_path / "a.toml").read_text() == '[trainer_config]\nprecision = "bf16-mixed"\n'


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("a.toml", '[trainer_config]\n# precisionlint: disable[PL104]\nprecision = "16-mixed"\n'
                   'tf32_matmul_precision = "high"\n# precisionlint: enable[PL104]\n'),
        ("a.yaml", "# precisionlint: disable[tf32-ignored-under-mixed-precision]\ntrainer:\n  precision: 16-mixed\n"
                   "  tf32_matmul_precision: high\n"),
        ("a.py", "import torch\n# precisionlint: disable[deprecated-amp-api]\nscaler = torch.cuda.amp.GradScaler()\n"
                 "# precisionlint: enable\n"),
    ],
)
def test_range_directives_in_every_format_with_comments(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    result = run(["check", name], tmp_path)
    assert result.returncode == 0, result.stdout
    # After `enable`, the rule reports again.
    lines = text.splitlines()
    if "enable" in text:
        (tmp_path / name).write_text("\n".join(lines + lines[2:-1]) + "\n")
        assert run(["check", name], tmp_path).returncode == 1


def test_add_noqa_silences_every_finding_and_keeps_the_meaning(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(MIXED_TF32)
    (tmp_path / "b.yaml").write_text("trainer:\n  precision: 16  # tuned\n  max_epochs: 3\n"
                                     "  _target_: lightning.pytorch.Trainer\n")
    (tmp_path / "c.py").write_text('import torch\nscaler = torch.cuda.amp.GradScaler()\nDOC = """\n'
                                   'torch.cuda.amp.GradScaler()\n"""\n')
    before = run(["check", "--output-format", "json", "."], tmp_path)
    assert json.loads(before.stdout)
    added = run(["check", "--add-noqa", "."], tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Added ")
    after = run(["check", "."], tmp_path)
    assert after.returncode == 0, after.stdout
    assert "# tuned  # precisionlint: ignore[legacy-precision-value]" in (tmp_path / "b.yaml").read_text()


# --- output ------------------------------------------------------------------------------------------------


@pytest.fixture()
def two_findings(tmp_path: Path) -> Path:
    # Lightning 2.x declared: the fix of the 1.x spelling in b.yaml is safe only with a 2.x floor.
    (tmp_path / "requirements.txt").write_text("lightning>=2.2\n")
    (tmp_path / "a.toml").write_text(MIXED_TF32)
    (tmp_path / "b.yaml").write_text(LEGACY_YAML)
    return tmp_path


def test_statistics(two_findings: Path) -> None:
    table = run(["check", "--statistics", "."], two_findings)
    assert table.returncode == 1
    assert table.stdout.splitlines() == [
        "1  PL102  legacy-precision-value              [warning] [*]",
        "1  PL104  tf32-ignored-under-mixed-precision  [warning] [*]",
        "Found 2 findings (0 errors, 2 warnings, 0 info) in 2 files checked.",
        "[*] 2 fixable with --fix.",
    ]
    data = json.loads(run(["check", "--statistics", "--output-format", "json", "."], two_findings).stdout)
    assert [(row["code"], row["count"], row["fixable"]) for row in data] == [("PL102", 1, 1), ("PL104", 1, 1)]


def test_output_file(two_findings: Path) -> None:
    result = run(["check", "--output-format", "json", "--output-file", "report.json", "."], two_findings)
    assert result.returncode == 1 and result.stdout == ""
    assert len(json.loads((two_findings / "report.json").read_text())) == 2


def test_concise_and_full_text(two_findings: Path) -> None:
    concise = run(["check", "--output-format", "concise", "a.toml"], two_findings).stdout
    assert concise.splitlines()[0].startswith("a.toml:3:25: PL104 [warning] [*]")
    full = run(["check", "--output-format", "full", "a.toml"], two_findings).stdout.splitlines()
    assert full[1:4] == ["  |", '3 | tf32_matmul_precision = "high"', "  |                         ^^^^^^"]
    # `text` (the default) is concise when stdout is not a terminal.
    assert run(["check", "a.toml"], two_findings).stdout == concise


def test_color_options_and_force_color(two_findings: Path) -> None:
    assert "\x1b[" not in run(["check", "a.toml"], two_findings, env={}).stdout
    assert "\x1b[" in run(["check", "a.toml"], two_findings, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" in run(["check", "--color", "always", "a.toml"], two_findings, env={"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in run(["check", "--color", "never", "a.toml"], two_findings,
                              env={"FORCE_COLOR": "1"}).stdout


def test_json_lines(two_findings: Path) -> None:
    lines = run(["check", "--output-format", "json-lines", "."], two_findings).stdout.splitlines()
    array = json.loads(run(["check", "--output-format", "json", "."], two_findings).stdout)
    assert [json.loads(line) for line in lines] == array


def test_json_contract_edits_have_offsets_and_positions(tmp_path: Path) -> None:
    text = "\ufeff# a comment\ntrainer:\n  précision_note: é\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    (item,) = json.loads(run(["check", "--output-format", "json", "a.yaml"], tmp_path).stdout)
    assert item["schema_version"] == 1 and item["severity"] in ("error", "warning", "info")
    (edit,) = item["fix"]["edits"]
    body = text[1:]  # offsets do not count the byte-order mark
    assert body[edit["start"]:edit["end"]] == "16"
    lines = body.split("\n")
    location, end = edit["location"], edit["end_location"]
    assert lines[location["line"] - 1][location["column"] - 1:end["column"] - 1] == "16"
    assert (location["line"], location["column"]) == (item["line"], item["column"])


def test_gitlab_code_quality(two_findings: Path) -> None:
    issues = json.loads(run(["check", "--output-format", "gitlab", "."], two_findings).stdout)
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["severity"]) for i in issues] == [
        ("a.toml", 3, "minor"), ("b.yaml", 2, "minor")]
    assert all(len(i["fingerprint"]) == 64 and i["check_name"].startswith("PL1") for i in issues)
    # Fingerprints do not move when unrelated lines are added above.
    (two_findings / "b.yaml").write_text("# header\n" + LEGACY_YAML)
    again = json.loads(run(["check", "--output-format", "gitlab", "."], two_findings).stdout)
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]


def test_junit(two_findings: Path) -> None:
    tree = ET.fromstring(run(["check", "--output-format", "junit", "."], two_findings).stdout)
    assert tree.tag == "testsuites" and tree.get("failures") == "2"
    assert [s.get("name") for s in tree.iter("testsuite")] == ["a.toml", "b.yaml"]
    clean = ET.fromstring(run(["check", "--output-format", "junit", "--select", "PL2", "."], two_findings).stdout)
    assert clean.get("failures") == "0" and len(list(clean.iter("testcase"))) == 1


# --- standard input ----------------------------------------------------------------------------------------


def test_check_stdin_with_a_file_name(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("lightning>=2.2\n")  # the 1.x spelling's fix needs a 2.x floor
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "precisionlint.toml").write_text('ignore = ["PL104"]\n')
    report = run(["check", "-", "--stdin-filename", "train.toml"], tmp_path, stdin=MIXED_TF32)
    assert report.returncode == 1 and report.stdout.startswith("train.toml:3:25: PL104")
    # The configuration is the one of the file's place.
    quiet = run(["check", "-", "--stdin-filename", "cfg/train.toml"], tmp_path, stdin=MIXED_TF32)
    assert quiet.returncode == 0, quiet.stdout
    fixed = run(["check", "--fix", "-", "--stdin-filename", "train.yaml"], tmp_path, stdin=LEGACY_YAML)
    assert fixed.stdout == "trainer:\n  precision: 16-mixed\n  max_epochs: 3\n  _target_: lightning.pytorch.Trainer\n"
    assert fixed.returncode == 0 and "Fixed 1 finding." in fixed.stderr
    nameless = run(["check", "-"], tmp_path, stdin=MIXED_TF32)
    assert nameless.returncode == 2 and "--stdin-filename" in nameless.stderr


# --- rules -------------------------------------------------------------------------------------------------


def test_rule_lookup_by_prefix_substring_and_group(tmp_path: Path) -> None:
    prefix = run(["rule", "tf32-ignored"], tmp_path)
    assert prefix.returncode == 0 and prefix.stdout.startswith("# tf32-ignored-under-mixed-precision (PL104)")
    substring = run(["rule", "master-weights"], tmp_path)
    assert substring.stdout.startswith("# half-params-without-master-weights")
    group = run(["rule", "PL1"], tmp_path)
    assert group.returncode == 0 and "PL101" in group.stdout and "PL107" in group.stdout and "PL201" not in group.stdout
    typo = run(["rule", "tf32-ignord"], tmp_path)
    assert typo.returncode == 2 and "tf32-ignored-under-mixed-precision" in typo.stderr
    listing = run(["rules"], tmp_path).stdout
    assert "unused-suppression" in listing and "(off by default)" in listing
    assert "(reads: PyTorch code)" in listing and "(reads: Lightning, version pins)" in listing


# --- GPUs --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu", ["RTX 5090", "H800", "L40", "GH200", "B300", "MI325X", "sm_90", "8.0", "cc8.9",
                                 "sm_120", "gfx942"])
def test_more_gpus_and_any_card_by_capability(tmp_path: Path, gpu: str) -> None:
    (tmp_path / "a.yaml").write_text("trainer:\n  precision: 16-mixed\n  _target_: lightning.pytorch.Trainer\n")
    result = run(["check", "--gpu", gpu, "a.yaml"], tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "unknown GPU" not in result.stderr


def test_custom_gpus_in_the_configuration_and_advise_reads_gpus(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.precisionlint]\ngpus = ["lab-card"]\n'
        '[tool.precisionlint.custom-gpus.lab-card]\ncompute-capability = "7.5"\n')
    (tmp_path / "a.yaml").write_text("trainer:\n  precision: bf16-mixed\n  _target_: lightning.pytorch.Trainer\n")
    result = run(["check", "a.yaml"], tmp_path)
    assert result.returncode == 1 and "bf16-unsupported-gpu" in result.stdout and "lab-card" in result.stdout
    advice = run(["advise", "--output-format", "json"], tmp_path)
    assert advice.returncode == 0, advice.stderr
    data = json.loads(advice.stdout)
    assert [t["name"] for t in data["targets"]] == ["lab-card"]
    assert data["recommendation"]["precision"] == "16-mixed"


def test_gpu_auto_without_a_gpu_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("trainer:\n  precision: bf16-mixed\n  _target_: lightning.pytorch.Trainer\n")
    env = {"NO_COLOR": "1", "PATH": os.path.dirname(sys.executable), "CUDA_VISIBLE_DEVICES": ""}
    result = run(["check", "--gpu", "auto", "a.yaml"], tmp_path, env=env)
    assert result.returncode == 0
    assert "--gpu auto found no GPU on this machine" in result.stderr
    assert "Warning" not in result.stderr and "warn(" not in result.stderr


GPU_NAMES = None


def _gpu_names() -> list[str]:
    from precisionlint.hardware.table import GPUS

    return [gpu.name for gpu in GPUS]


WRITE_INPUTS = {
    "trainer.toml": '[trainer_config]\nprecision = "16-mixed"\ntf32_matmul_precision = "high"\n',
    "lightning.yaml": "trainer:\n  precision: 16-mixed\n  max_epochs: 3\n  _target_: lightning.pytorch.Trainer\n",
    "hf.yaml": "output_dir: out\nfp16: true\ntf32: true\nper_device_train_batch_size: 8\n",
    "accelerate.yaml": "compute_environment: LOCAL_MACHINE\nmixed_precision: fp16\nnum_processes: 1\n",
    "ds_config.json": '{"train_batch_size": 8, "fp16": {"enabled": true}}\n',
    "hf.json": '{"output_dir": "o", "bf16": true, "tf32": true, "per_device_train_batch_size": 8}\n',
    "new.yaml": "max_epochs: 3\n",
}


def test_advise_write_is_accepted_by_check_for_every_gpu_and_format(tmp_path: Path) -> None:
    """Every GPU of the table x every config format: what `advise --write` writes passes `check` for that GPU.
    In-process (click's runner): 300 subprocesses would take minutes."""
    from click.testing import CliRunner

    from precisionlint.cli.commands import main

    runner = CliRunner()
    failures = []
    for gpu in _gpu_names():
        for name, text in WRITE_INPUTS.items():
            folder = tmp_path / f"{gpu.replace(' ', '_')}-{name}"
            folder.mkdir()
            path = folder / name
            path.write_text(text)
            wrote = runner.invoke(main, ["advise", "--gpu", gpu, "--write", str(path)])
            checked = runner.invoke(main, ["check", "--no-progress", "--gpu", gpu, str(path)])
            if wrote.exit_code != 0 or checked.exit_code != 0:
                failures.append((gpu, name, wrote.output, checked.output))
    assert not failures, failures[:3]


# --- install and pre-commit --------------------------------------------------------------------------------


def test_hook_runs_serially() -> None:
    from ruamel.yaml import YAML

    (hook,) = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["require_serial"] is True


def test_readme_install_instructions_name_nothing_that_does_not_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "rev: v0.1.0" not in readme and "github.com/precisionlint" not in readme
    assert 'pip install "precisionlint[probe]"' not in readme and 'pip install ".[probe]"' in readme
    assert "seed" not in readme.lower()
    usage = readme.split("<!-- usage -->")[1].split("<!-- /usage -->")[0]
    for token in usage.split():
        if token.startswith("examples/"):
            assert (ROOT / token).exists(), token


def test_readme_usage_commands_run_as_written(tmp_path: Path) -> None:
    """Each usage line of the README, run from a copy of the repository's example (the writing ones only
    with --diff, as written)."""
    import shlex
    import shutil

    readme = (ROOT / "README.md").read_text()
    usage = readme.split("<!-- usage -->")[1].split("<!-- /usage -->")[0]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for line in usage.strip().strip("`").strip().splitlines():
        command = shlex.split(line.split("#", 1)[0])
        assert command[0] == "precisionlint"
        result = run(command[1:], tmp_path)
        assert result.returncode in (0, 1), (line, result.stderr)
        assert "error" not in result.stderr.lower(), (line, result.stderr)


def test_readme_json_example_is_the_real_output() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- json-example -->")[1].split("<!-- /json-example -->")[0]
    documented = json.loads(block.strip().removeprefix("```json").removesuffix("```"))
    real = run(["check", "--output-format", "json", "examples/project/configs/lightning.yaml"], ROOT)
    assert json.loads(real.stdout) == documented
    keys = {"schema_version", "code", "name", "severity", "path", "line", "column", "end_line", "end_column",
            "message", "fix"}
    table = readme.split("### The JSON contract")[1].split("<!-- json-example -->")[0]
    assert all(f"`{key}`" in table for key in keys)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this repository as a git checkout")
def test_pre_commit_config_from_the_readme_with_a_local_repository(tmp_path: Path) -> None:
    """The README's `.pre-commit-config.yaml`, with `repo:` the path of this clone and `rev:` its commit: one
    process for every file (require_serial), so one summary."""
    pytest.importorskip("pre_commit")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    if dirty.strip():
        pytest.skip("the clone has uncommitted changes: pre-commit installs the committed revision")
    readme = (ROOT / "README.md").read_text()
    snippet = readme.split("```yaml\nrepos:\n")[1].split("```")[0]
    config = "repos:\n" + snippet.replace("/path/to/precisionlint", str(ROOT)).replace(
        "<the commit printed above>", head.stdout.strip())
    work = tmp_path / "work"
    work.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    (work / ".pre-commit-config.yaml").write_text(config)
    for index in range(12):
        (work / f"c{index}.toml").write_text(MIXED_TF32)
    subprocess.run(["git", "add", "."], cwd=work, check=True, capture_output=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    result = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=work,
                            capture_output=True, text=True, env=env, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert output.count("Found 12 findings") == 1 and output.count("Found ") == 1, output


def test_excludes_of_the_run_and_of_a_nested_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.precisionlint]\nexclude = ["fixtures/"]\n')
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "x.toml").write_text(MIXED_TF32)
    (tmp_path / "sub" / "gen").mkdir(parents=True)
    (tmp_path / "sub" / "precisionlint.toml").write_text('exclude = ["gen/"]\n')
    (tmp_path / "sub" / "gen" / "y.toml").write_text(MIXED_TF32)
    (tmp_path / "sub" / "z.toml").write_text(MIXED_TF32)
    walked = run(["check", "--output-format", "json", "."], tmp_path)
    assert [item["path"] for item in json.loads(walked.stdout)] == ["sub/z.toml"]
    # A file named on the command line is checked (as ruff), unless --force-exclude (the pre-commit hook).
    named = run(["check", "--output-format", "json", "fixtures/x.toml", "sub/gen/y.toml"], tmp_path)
    assert [item["path"] for item in json.loads(named.stdout)] == ["fixtures/x.toml", "sub/gen/y.toml"]
    forced = run(["check", "--force-exclude", "fixtures/x.toml", "sub/gen/y.toml"], tmp_path)
    assert forced.returncode == 0 and "No files to check." in forced.stdout


def test_the_probe_extra_named_in_the_readme_exists() -> None:
    """`python3 -m pip install ".[probe]"` from the clone: the extra must exist and bring torch."""
    import tomlkit

    extras = tomlkit.parse((ROOT / "pyproject.toml").read_text()).unwrap()["project"]["optional-dependencies"]
    assert any(requirement.startswith("torch") for requirement in extras["probe"])
    readme = (ROOT / "README.md").read_text()
    for extra in ("probe", "server"):
        if f'".[{extra}]"' in readme:
            assert extra in extras


def test_exclude_globs_are_gitignore_style_too(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.precisionlint]\nexclude = ["**/*.yaml"]\n')
    (tmp_path / "root.yaml").write_text(LEGACY_YAML)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "deep.yaml").write_text(LEGACY_YAML)
    (tmp_path / "kept.toml").write_text('[trainer_config]\nprecision = "16"\n')
    result = run(["check", "--output-format", "json", "."], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == ["kept.toml"]


def test_readme_configuration_example_is_valid(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Configuration")[1].split("```toml\n")[1].split("```")[0]
    (tmp_path / "pyproject.toml").write_text(block)
    (tmp_path / "a.toml").write_text(CLEAN)
    result = run(["check", "--show-settings", "a.toml"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "GPUs: A100 SXM" in result.stdout and "my-card" in result.stdout


def test_readme_documents_every_option_of_check() -> None:
    from precisionlint.cli.check_options import OPTIONS

    readme = (ROOT / "README.md").read_text()
    table = readme.split("### Options of `check`")[1].split("Exit codes")[0]
    missing = [flag for option in OPTIONS for flag in option.flags if f"`{flag}" not in table]
    assert not missing
