"""Recorded probe runs (tests/fixtures/probe/*.json, written by benchmarks/gpu_acceptance.sh as fixture.json)
against today's code and against the simulated GPU the other probe tests run on.

Each fixture is `advise --probe --output-format json` from one machine, with the device, driver and torch it came
from. A run on a real GPU calibrates the simulation: the simulated card given the rates the real one measured must
come to the same formats, APIs, verdicts and recommendation, and the simulated H100's rates must stay near a real
Hopper card's. Until a GPU run is committed, a CPU run of this repository's development machine stands in
(`"stand_in": true`): it checks the record's format and the recommendation, not the simulation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from precisionlint.advise import advisor  # noqa: E402
from precisionlint.advise.probe import judge  # noqa: E402
from precisionlint.advise.probe.results import ProbeResult  # noqa: E402
from precisionlint.cli.advise_command import advise  # noqa: E402
from tests.simulated_gpu import H100_RATES, SimulatedCard, simulated_gpus  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "probe"
RECORDED_WITH = ("device_name", "device_kind", "compute_capability", "driver", "torch", "cuda", "recorded",
                 "command", "stand_in")
ALL_FIXTURES = sorted(FIXTURES.glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _gpu_fixtures() -> list[Path]:
    return [p for p in ALL_FIXTURES if not _load(p)["recorded_with"]["stand_in"]]


def test_there_is_a_fixture() -> None:
    assert ALL_FIXTURES, "no recorded probe run under tests/fixtures/probe (benchmarks/gpu_acceptance.sh writes one)"


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.stem)
def test_a_fixture_says_where_it_came_from(path: Path) -> None:
    fixture = _load(path)
    recorded = fixture["recorded_with"]
    assert set(RECORDED_WITH) <= set(recorded)
    device = fixture["payload"]["probe"]["device"]
    assert recorded["device_name"] == device["name"] and recorded["torch"] == device["torch_version"]
    # Honest labels: only a run on a GPU is a GPU fixture, and a GPU fixture names its driver.
    assert recorded["stand_in"] == (device["kind"] != "cuda")
    if not recorded["stand_in"]:
        assert recorded["driver"] and recorded["cuda"] and recorded["compute_capability"]
        assert path.stem.startswith("gpu-")
    else:
        assert path.stem.startswith("cpu-stand-in")


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.stem)
def test_a_recorded_run_is_judged_and_recommended_as_it_was(path: Path) -> None:
    payload = _load(path)["payload"]
    result = ProbeResult.from_json(payload["probe"])
    rec = advisor.recommend(probe=result)
    assert rec.precision == payload["recommendation"]["precision"]
    assert rec.tf32_matmul_precision == payload["recommendation"]["tf32_matmul_precision"]
    statuses = {v.fmt: v.status for v in judge.verdicts(result)}
    assert statuses == {v["format"]: v["status"] for v in payload["probe"]["verdicts"]}
    for timing in payload["probe"]["timings"]:
        again = result.timing(timing["format"])
        assert again is not None and again.tflops == pytest.approx(timing["tflops"], rel=1e-3)
        assert again.reliable == timing["reliable"]


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.stem)
def test_todays_probe_writes_the_recorded_format(path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    """Every key of the recorded run, at every level, is still written (new ones may join): a saved run stays
    comparable with what today's probe writes (on the simulated card of that fixture, or on this CPU)."""
    recorded = _load(path)["payload"]
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi: telemetry is compared by kind only
    if recorded["probe"]["device"]["kind"] == "cuda":
        with simulated_gpus(monkeypatch, _card_of(recorded)):
            result = CliRunner().invoke(advise, ["--probe", "--budget", "6", "--size", "128", "--output-format",
                                                 "json"])
    elif torch.cuda.is_available():
        pytest.skip("a CPU fixture is compared with a CPU run; this machine has a GPU")
    else:
        result = CliRunner().invoke(advise, ["--probe", "--budget", "1", "--size", "64", "--output-format", "json"])
    assert result.exit_code == 0, result.output
    missing = _keys(recorded, skip={"telemetry"}) - _keys(json.loads(result.stdout), skip={"telemetry"})
    assert not missing, sorted(missing)


def _keys(value: Any, skip: set[str], where: str = "") -> set[str]:
    """Every key path of a JSON value (lists: the keys of their first element)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found.add(f"{where}.{key}")
            if key not in skip and key not in ("peak_tflops", "settings", "snippets"):
                found |= _keys(item, skip, f"{where}.{key}")
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        found |= _keys(value[0], skip, f"{where}[]")
    return found


def _card_of(payload: dict[str, Any]) -> SimulatedCard:
    """The recorded GPU as a simulated card: its name, compute capability, memory, and each format at the rate
    the real card measured."""
    device = payload["probe"]["device"]
    major, minor = (int(x) for x in device["compute_capability"].split("."))
    rates = {t["format"]: float(t["tflops"]) for t in payload["probe"]["timings"]}
    rates.setdefault("fp64", rates.get("fp32", 1.0))  # the numeric check's float64 reference
    return SimulatedCard(name=device["name"], major=major, minor=minor, total_memory=int(device["memory_bytes"]),
                         multi_processor_count=int(device["multiprocessors"]), rates=rates)


@pytest.mark.parametrize("path", _gpu_fixtures() or [pytest.param(None, marks=pytest.mark.skip(
    reason="no GPU fixture committed yet (benchmarks/gpu_acceptance.sh on a lent GPU records one)"))],
    ids=lambda p: p.stem if p else "none")
def test_the_simulated_card_decides_as_the_real_one_did(path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    recorded = _load(path)["payload"]
    monkeypatch.setenv("PATH", str(tmp_path))
    with simulated_gpus(monkeypatch, _card_of(recorded)):
        result = CliRunner().invoke(advise, ["--probe", "--budget", "6", "--size", "128", "--output-format", "json"])
    assert result.exit_code == 0, result.output
    simulated = json.loads(result.stdout)
    real, sim = recorded["probe"], simulated["probe"]
    assert [t["format"] for t in sim["timings"]] == [t["format"] for t in real["timings"]]
    assert [t["api"] for t in sim["timings"]] == [t["api"] for t in real["timings"]]
    assert [s["fmt"] for s in sim["skipped"]] == [s["fmt"] for s in real["skipped"] if " " not in s["fmt"]]
    for mine, theirs in zip(sim["timings"], real["timings"], strict=True):
        assert mine["tflops"] == pytest.approx(theirs["tflops"], rel=0.05), mine["format"]
    assert {v["format"]: v["status"] for v in sim["verdicts"]} == {v["format"]: v["status"] for v in real["verdicts"]}
    for key in ("precision", "tf32_matmul_precision", "grad_scaler"):
        assert simulated["recommendation"][key] == recorded["recommendation"][key], key
    fp8_note = [n.split(":")[0] for n in simulated["recommendation"]["notes"] if n.startswith("FP8")]
    assert fp8_note == [n.split(":")[0] for n in recorded["recommendation"]["notes"] if n.startswith("FP8")]


def test_the_simulated_h100_is_near_a_real_hopper_card() -> None:
    hopper = [p for p in _gpu_fixtures()
              if _load(p)["payload"]["probe"]["device"]["compute_capability"] == "9.0"]
    if not hopper:
        pytest.skip("no Hopper GPU fixture committed yet: the simulated H100's rates are checked against one when "
                    "it is")
    for path in hopper:
        measured = {t["format"]: t["tflops"] for t in _load(path)["payload"]["probe"]["timings"]}
        for fmt, rate in H100_RATES.items():
            if fmt in measured:
                assert rate == pytest.approx(measured[fmt], rel=0.2), (path.name, fmt, measured[fmt])
