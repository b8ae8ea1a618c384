"""Adopting the linter on a project that already has findings, through the real CLI: a baseline, changed lines
only, and the flags a ruff user reaches for (-q, --exit-non-zero-on-fix, --exclude, --extend-exclude,
--show-fixes, --config KEY=VALUE, --output-format grouped, rule --all)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "project"
MIXED_TF32 = '[trainer_config]\nprecision = "16-mixed"\ntf32_matmul_precision = "high"\n'


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def git(args: list[str], cwd: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(EXAMPLE, target)
    return target


def codes(stdout: str) -> list[str]:
    return sorted(line.split(": ")[1].split()[0] for line in stdout.splitlines() if ": PL" in line)


def test_a_baseline_hides_todays_findings_and_survives_moved_lines(project: Path) -> None:
    written = run(["check", "--write-baseline", "baseline.json", "."], project)
    assert written.returncode == 0, written.stderr
    assert written.stdout == ("Recorded 10 findings in baseline.json; `check --baseline baseline.json` reports "
                              "only the others.\n")
    entries = json.loads((project / "baseline.json").read_text())["findings"]
    assert len(entries) == 10 and {"code", "path", "fingerprint"} <= set(entries[0])
    clean = run(["check", "--baseline", "baseline.json", "."], project)
    assert clean.returncode == 0, clean.stdout
    assert clean.stdout.splitlines()[-1] == "10 more findings not shown: in the baseline baseline.json."
    # Lines move (a header above them); a new mistake is added: only that one is reported.
    train = project / "train.py"
    train.write_text("# Training entry point.\n\n" + train.read_text())
    config = project / "configs" / "trainer.toml"
    config.write_text(config.read_text() + "\n[other]\n[trainer_config.extra]\n")
    (project / "configs" / "new.toml").write_text(MIXED_TF32)
    after = run(["check", "--baseline", "baseline.json", "."], project)
    assert after.returncode == 1
    assert codes(after.stdout) == ["PL104"] and "configs/new.toml:3:25: PL104" in after.stdout
    # From another folder the same baseline means the same (its paths are relative to it).
    elsewhere = run(["check", "--baseline", "project/baseline.json", "project"], project.parent)
    assert codes(elsewhere.stdout) == ["PL104"]


def test_a_baseline_that_is_not_one_is_an_error(project: Path) -> None:
    (project / "bad.json").write_text("[1, 2]")
    for name in ("bad.json", "missing.json"):
        result = run(["check", "--baseline", name, "."], project)
        assert result.returncode == 2 and result.stderr.startswith(f"precisionlint: error: {name}: ")


def test_diff_against_reports_only_changed_lines(project: Path) -> None:
    git(["init", "-q"], project)
    git(["add", "."], project)
    git(["commit", "-qm", "start"], project)
    assert codes(run(["check", "--diff-against", "HEAD", "."], project).stdout) == []
    train = project / "train.py"
    lines = train.read_text().split("\n")
    lines[21] = lines[21].replace("torch.autocast(", "torch.autocast( ")  # touch the PL208 line only
    train.write_text("\n".join(lines))
    (project / "configs" / "new.toml").write_text(MIXED_TF32)  # untracked: all of it is new
    result = run(["check", "--diff-against", "HEAD", "."], project)
    assert result.returncode == 1
    assert codes(result.stdout) == ["PL104", "PL208"]
    assert "configs/new.toml:3:25: PL104" in result.stdout
    assert result.stdout.splitlines()[-1] == "9 more findings not shown: on lines unchanged since HEAD."
    bad_ref = run(["check", "--diff-against", "no-such-branch", "."], project)
    assert bad_ref.returncode == 2 and "'no-such-branch' is not a commit, branch or tag" in bad_ref.stderr


def test_diff_against_outside_a_repository_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(MIXED_TF32)
    result = run(["check", "--diff-against", "HEAD", "a.toml"], tmp_path)
    assert result.returncode == 2 and "is not inside a git work tree" in result.stderr


def test_quiet_prints_the_findings_only(project: Path) -> None:
    result = run(["check", "-q", "."], project)
    assert result.returncode == 1
    assert len(codes(result.stdout)) == 10 and "Found" not in result.stdout and "fixable" not in result.stdout


def test_exit_non_zero_on_fix_and_show_fixes(project: Path) -> None:
    config = project / "configs" / "trainer.toml"
    plain = run(["check", "--fix", "configs/trainer.toml"], project)
    assert plain.returncode == 0 and "Fixed 1 finding." in plain.stdout
    config.write_text(config.read_text().replace('precision = "16-mixed"',
                                                 'precision = "16-mixed"\ntf32_matmul_precision = "high"'))
    result = run(["check", "--fix", "--exit-non-zero-on-fix", "--show-fixes", "configs/trainer.toml"], project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "Fixed 1 finding:", "- configs/trainer.toml:", "    1 × PL104 (tf32-ignored-under-mixed-precision)",
        "All checks passed! (1 file checked)"]
    again = run(["check", "--fix", "--exit-non-zero-on-fix", "configs/trainer.toml"], project)
    assert again.returncode == 0
    both = run(["check", "--exit-zero", "--exit-non-zero-on-fix", "."], project)
    assert both.returncode == 2


def test_exclude_and_extend_exclude_on_the_command_line(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nexclude = ["train.py"]\n')
    assert len(codes(run(["check", "."], project).stdout)) == 4
    # --exclude replaces the configuration's exclude; --extend-exclude adds to it.
    assert len(codes(run(["check", "--exclude", "configs/ds_config.json", "."], project).stdout)) == 8
    extended = run(["check", "--extend-exclude", "configs/ds_config.json,configs/lightning.yaml", "."], project)
    assert codes(extended.stdout) == ["PL104"]
    # extend-exclude in the configuration adds as well.
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nexclude = ["train.py"]\n'
                                            'extend-exclude = ["configs/ds_config.json"]\n')
    assert len(codes(run(["check", "."], project).stdout)) == 2


def test_config_key_value_overrides(project: Path) -> None:
    result = run(["check", "--config", 'fail-on="error"', "--config", 'extend-ignore=["PL2"]', "."], project)
    assert result.returncode == 1 and codes(result.stdout) == ["PL102", "PL104", "PL105", "PL106"]
    only_warnings = run(["check", "--config", 'fail-on="error"', "configs/trainer.toml"], project)
    assert only_warnings.returncode == 0 and "PL104" in only_warnings.stdout
    settings = run(["check", "--show-settings", "--config", 'fail-on="info"', "."], project)
    assert "Fail on: info" in settings.stdout and "fail-on (--config)" in settings.stdout
    for bad, says in (("fail-on=error", "a string value needs quotes"), ("nope=1", "unknown key 'nope'")):
        refused = run(["check", "--config", bad, "."], project)
        assert refused.returncode == 2 and says in refused.stderr


def test_grouped_output(project: Path) -> None:
    result = run(["check", "--output-format", "grouped", "configs"], project)
    lines = result.stdout.splitlines()
    assert lines[0] == "configs/ds_config.json:"
    assert lines[1].startswith("  6:19  PL106 [warning] ")
    assert "configs/trainer.toml:" in lines and any(line.startswith("  4:25 PL104 [warning] [*] ") for line in lines)
    assert lines[-2].startswith("Found 4 findings")


def test_rule_all_prints_every_rule() -> None:
    from precisionlint.checks import all_rules

    result = run(["rule", "--all"], ROOT)
    assert result.returncode == 0
    for one in all_rules():
        assert f"# {one.name} ({one.code})\n" in result.stdout
    assert run(["rule"], ROOT).returncode == 2


def test_check_at_the_root_of_a_clone_leaves_out_the_rule_cases() -> None:
    result = run(["check", "--no-cache", "--statistics", "."], ROOT)
    assert "Found 10 findings (4 errors, 5 warnings, 1 info)" in result.stdout, result.stdout
    listed = run(["check", "--show-files", "."], ROOT).stdout.splitlines()
    assert listed and not any(path.startswith("rules/") for path in listed)


def test_a_named_folder_inside_an_excluded_one_is_checked(project: Path) -> None:
    """As ruff walks a folder named on the command line: `check rules/x` in a clone that excludes rules/ checks
    rules/x (from the root or from inside it); `check .` still leaves rules/ out; --force-exclude keeps it out."""
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nextend-exclude = ["configs/"]\n')
    assert codes(run(["check", "."], project).stdout) == ["PL203", "PL204", "PL206", "PL207", "PL208", "PL209"]
    assert len(codes(run(["check", "configs"], project).stdout)) == 4
    assert len(codes(run(["check", "."], project / "configs").stdout)) == 4
    assert codes(run(["check", "--force-exclude", "configs"], project).stdout) == []
