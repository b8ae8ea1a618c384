"""benchmarks/gpu_acceptance.sh in its CPU-only --dry mode, as CI runs it: the whole run, and its own check of the
folder it writes (the same check decides a real GPU run's exit code)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_acceptance.sh"


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_acceptance", ROOT / "benchmarks" / "gpu_acceptance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("acceptance") / "out"
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["bash", str(SCRIPT), "--dry", str(out)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    return done, out


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_dry_run_passes_its_own_checks(dry_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, out = dry_run
    assert done.returncode == 0, done.stderr[-3000:]
    summary = _summary(out)
    assert summary["dry"] is True and summary["version"] == 1
    runner = _runner()
    assert [s["name"] for s in summary["steps"]] == list(runner.STEP_NAMES)
    steps = {s["name"]: s for s in summary["steps"]}
    assert steps["nvidia_smi"]["skipped"] and steps["nvidia_smi"]["rc"] is None  # no nvidia-smi in a dry run
    for name in ("probe_json", "probe_report", "check_gpu_auto", "gpu_tests"):
        assert steps[name]["skipped"] is None and isinstance(steps[name]["wall_s"], float), name
    assert steps["probe_json"]["rc"] == 0 and steps["probe_report"]["rc"] == 0
    assert steps["check_gpu_auto"]["rc"] in (0, 1)
    checks = {c["name"]: c["ok"] for c in summary["expectations"]}
    assert checks["probe_json_stderr_clean"] is True and checks["probe_report_stderr_clean"] is True
    assert checks["device_kind"] is True and checks["every_format_measured"] is True
    assert checks["bf16_judged_against_achievable"] is None  # applies to an H100 / H200 only
    assert False not in checks.values()
    assert runner.format_errors(out) == []
    # The GPU tests were collected and skipped here (no CUDA): they exist and are marked.
    report = (out / "gpu-tests.txt").read_text(encoding="utf-8")
    assert "skipped" in report and "needs a CUDA GPU" in report
    assert "gpu_acceptance: wrote" in done.stderr


def test_the_fixture_says_it_stands_in_for_a_gpu(dry_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = dry_run
    fixture = json.loads((out / "fixture.json").read_text(encoding="utf-8"))
    recorded = fixture["recorded_with"]
    assert recorded["stand_in"] is True and recorded["device_kind"] == "cpu" and recorded["driver"] is None
    assert recorded["torch"] == fixture["payload"]["probe"]["device"]["torch_version"]
    assert fixture["payload"] == json.loads((out / "probe.json").read_text(encoding="utf-8"))


def test_a_damaged_output_folder_is_caught(dry_run: tuple[subprocess.CompletedProcess[str], Path],
                                          tmp_path: Path) -> None:
    _, out = dry_run
    runner = _runner()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for path in out.iterdir():
        if path.is_file():
            (damaged / path.name).write_bytes(path.read_bytes())
    (damaged / "report.html").unlink()
    summary = _summary(damaged)
    summary["steps"][2]["rc"] = "0"
    del summary["expectations"][0]["detail"]
    (damaged / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    fixture = json.loads((damaged / "fixture.json").read_text(encoding="utf-8"))
    del fixture["recorded_with"]["driver"]
    (damaged / "fixture.json").write_text(json.dumps(fixture), encoding="utf-8")
    errors = runner.format_errors(damaged)
    assert "report.html: missing, or without the throughput bars" in errors
    assert any("step probe_json: rc" in e for e in errors)
    assert any("malformed expectation" in e for e in errors)
    assert "fixture.json: recorded_with lacks driver" in errors


def test_missing_dependencies_come_from_the_carried_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A GPU machine's python3 without one of the dependencies: its wheel is unpacked beside the run, not installed.
    runner = _runner()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "not_installed_dep-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("not_installed_dep/__init__.py", "VALUE = 42\n")
    monkeypatch.setattr(runner, "WHEELS", wheels)
    monkeypatch.setattr(runner, "DEPENDENCIES", {"click": "click", "not_installed_dep": "not-installed-dep",
                                                 "absent_everywhere": "absent-everywhere"})
    unpacked, missing = runner.dependency_path(wheels / "site")
    assert unpacked == ["not_installed_dep-1.0-py3-none-any.whl"]  # click is importable here: left alone
    assert missing == ["absent-everywhere"]
    done = subprocess.run([sys.executable, "-c", "import not_installed_dep; print(not_installed_dep.VALUE)"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(wheels / "site")})
    assert done.stdout.strip() == "42"
