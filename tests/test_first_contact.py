"""What a new user meets first, through the real CLI: the summary says what was not checked and which fixes
were left out, --statistics shows every severity and the totals, and a GPU no card is is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "project"


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_config_no_framework_reads_is_named_in_the_summary(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text("trainer:\n  precision: 16\n")
    (tmp_path / "clean.toml").write_text('[trainer_config]\nprecision = "bf16-mixed"\n')
    result = run(["check", "--no-cache", "."], tmp_path)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "All checks passed! (2 files checked)",
        "Not checked: 1 config file has precision settings that no framework was identified to read "
        "(`precisionlint check --show-frameworks PATH` shows why).",
    ]
    # The cache keeps the count: a second run that reads nothing says the same.
    assert run(["check", "."], tmp_path).stdout == run(["check", "."], tmp_path).stdout
    assert "Not checked: 1 config file" in run(["check", "."], tmp_path).stdout
    assert "Not checked" not in run(["check", "clean.toml"], tmp_path).stdout


def test_the_hook_shows_its_summary_when_it_passes() -> None:
    manifest = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "verbose: true" in manifest


def test_unsafe_fixes_are_announced_in_the_summary_and_under_diff(tmp_path: Path) -> None:
    result = run(["check", "--no-cache", "."], EXAMPLE)
    assert "[*] 1 fixable with --fix (5 more fixes available with --unsafe-fixes)." in result.stdout
    with_unsafe = run(["check", "--no-cache", "--unsafe-fixes", "."], EXAMPLE)
    assert "[*] 6 fixable with --fix." in with_unsafe.stdout
    diff = run(["check", "--no-cache", "--diff", "configs/lightning.yaml"], EXAMPLE)
    assert (diff.returncode, diff.stdout) == (0, "")
    assert diff.stderr == "No safe fixes (1 more fix available with --unsafe-fixes).\n"
    both = run(["check", "--no-cache", "--diff", "."], EXAMPLE)
    assert both.stderr == "Would fix 1 finding (5 more fixes available with --unsafe-fixes).\n"


def test_statistics_show_each_severity_totals_and_fixes(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from typing import Optional\n\nfrom torch.cuda.amp.grad_scaler import GradScaler\n\n\n"
        "def build(loss_scaler: Optional[GradScaler] = None) -> None:\n    return None\n")
    (tmp_path / "b.py").write_text(
        "import torch\n\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    pass\n")
    result = run(["check", "--no-cache", "--statistics", "."], tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "3  PL207  deprecated-amp-api  [2 warning, 1 info] (2 with --unsafe-fixes)",
        "Found 3 findings (0 errors, 2 warnings, 1 info) in 2 files checked.",
        "No safe fixes (2 more fixes available with --unsafe-fixes).",
    ]
    data = json.loads(run(["check", "--no-cache", "--statistics", "--output-format", "json", "."], tmp_path).stdout)
    assert data == [{"code": "PL207", "name": "deprecated-amp-api", "count": 3, "fixable": 0,
                     "severity": "warning", "severities": {"warning": 2, "info": 1}}]


@pytest.mark.parametrize("gpu", ["sm_999", "gfx9999", "cc 9.9", "sm_88"])
def test_a_gpu_no_card_is_is_a_usage_error(gpu: str) -> None:
    result = run(["check", "--gpu", gpu, "configs/trainer.toml"], EXAMPLE)
    assert result.returncode == 2
    assert "no NVIDIA GPU has compute capability" in result.stderr or "no AMD GPU has this ISA" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("gpu", ["sm_89", "cc8.9", "8.9", "sm_100a", "gfx942", "gfx1100", "sm_121"])
def test_real_compute_capabilities_and_isas_are_accepted(gpu: str) -> None:
    assert run(["check", "--gpu", gpu, "configs/trainer.toml"], EXAMPLE).returncode in (0, 1)


def test_a_card_by_capability_is_described_once() -> None:
    result = run(["check", "--show-settings", "--gpu", "sm_89", "."], EXAMPLE)
    assert "GPUs: compute capability 8.9 (Ada Lovelace)\n" in result.stdout


def test_a_ci_job_runs_the_suite_with_the_newest_dependencies() -> None:
    script = ROOT / ".ci" / "newest"
    assert os.access(script, os.X_OK)
    text = script.read_text()
    assert "--upgrade --upgrade-strategy eager" in text and "pytest" in text
    assert ".ci/newest" in (ROOT / "README.md").read_text()


def test_a_missing_path_is_one_error_line(tmp_path: Path) -> None:
    result = run(["check", "nope.yaml"], tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "precisionlint: error: nope.yaml: no such file or directory\n"
    statistics = run(["check", "--statistics", "nope.yaml"], tmp_path)
    assert (statistics.returncode, statistics.stdout) == (2, "")


ACCELERATE_FP8 = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"
LIGHTNING_FP8 = "trainer:\n  accelerator: gpu\n  precision: transformer-engine\nmodel:\n  lr: 0.1\n"


@pytest.mark.parametrize("priority", [[], ["--priority", "speed"]])
def test_advise_keeps_fp8_where_every_target_runs_it(tmp_path: Path, priority: list[str]) -> None:
    for name, text in (("accelerate.yaml", ACCELERATE_FP8), ("lightning.yaml", LIGHTNING_FP8)):
        (tmp_path / name).write_text(text)
        result = run(["advise", "--gpu", "H100", *priority, "--write", name], tmp_path)
        assert result.returncode == 0, result.stderr
        assert "nothing to change" in result.stdout and (tmp_path / name).read_text() == text
    shown = run(["advise", "--gpu", "H100", "--config", "accelerate.yaml"], tmp_path).stdout
    assert "The configuration trains in FP8: does every target run it? yes: kept" in shown
    assert "mixed_precision: fp8" in shown and "te.fp8_autocast(enabled=True" in shown
    assert 'precision = "transformer-engine"' in shown


def test_advise_replaces_fp8_where_a_target_lacks_it(tmp_path: Path) -> None:
    (tmp_path / "accelerate.yaml").write_text(ACCELERATE_FP8)
    result = run(["advise", "--gpu", "H100", "--gpu", "A100", "--write", "accelerate.yaml", "--diff"], tmp_path)
    assert "-mixed_precision: fp8\n+mixed_precision: bf16\n" in result.stdout
    accuracy = run(["advise", "--gpu", "H100", "--priority", "accuracy", "--config", "accelerate.yaml"], tmp_path)
    assert "yes, but accuracy comes first" in accuracy.stdout


def test_the_fleet_step_names_only_the_cards_without_bf16() -> None:
    result = run(["advise", "--gpu", "A100", "--gpu", "V100"], ROOT)
    flat = " ".join(result.stdout.split())
    assert "? no: V100 SXM2 (Volta, cc 7.0) (not A100 SXM, which has it)" in flat


def test_a_trainer_config_table_is_named_as_written(tmp_path: Path) -> None:
    (tmp_path / "train.toml").write_text('[trainer_config]\nprecision = "16-mixed"\n')
    result = run(["check", "--gpu", "A100", "train.toml"], tmp_path)
    assert "([trainer_config] precision='16-mixed')" in result.stdout
    assert "Lightning precision" not in result.stdout


def test_measured_figures_use_one_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    from precisionlint.advise import advisor

    assert advisor._figure(0.08945) == "0.0895" and advisor._figure(989.4) == "989"
    source = Path(advisor.__file__).read_text()
    assert "{t.tflops:.2f}" not in source  # the median is shown as its range is, by _figure


@pytest.mark.parametrize("columns", range(8, 61))
def test_the_progress_bar_never_cuts_a_word(columns: int) -> None:
    import io

    from precisionlint.run.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = Progress(300, stream, delay=0, width=columns, clock=lambda: 0.0)
    bar.advance(12)
    line = stream.getvalue().rsplit("\r", 1)[-1]
    assert len(line) < columns
    assert line == "" or line.endswith((" files", "/300"))


def test_findings_are_short_and_their_evidence_is_a_note() -> None:
    """The first line of a finding says what is wrong and what to do; why, and on what evidence a file was read
    as a framework's, follow as note lines (and in JSON as "notes")."""
    result = run(["check", "--no-cache", "--output-format", "concise", "."], EXAMPLE)
    lines = result.stdout.splitlines()
    findings = [line for line in lines if ": PL" in line]
    assert len(findings) == 10 and max(len(line) for line in findings) <= 240
    legacy = lines.index(next(line for line in findings if "PL102" in line))
    assert lines[legacy + 2] == ("  note: read as Lightning's because of `trainer:` with Lightning Trainer arguments "
                                 "only beside `model:`/`data:`")
    data = json.loads(run(["check", "--no-cache", "--output-format", "json", "configs/lightning.yaml"],
                          EXAMPLE).stdout)
    assert "read as" not in data[0]["message"] and data[0]["notes"][0].startswith("read as Lightning's")
    github = run(["check", "--no-cache", "--output-format", "github", "configs/lightning.yaml"], EXAMPLE).stdout
    assert "(read as Lightning's because of" in github  # one text per annotation: the notes travel with it
