"""The probe's GPU path on simulated cards (tests/simulated_gpu.py): the real probe code, real torch matmuls on
the CPU, CUDA events and kernel times from the simulation. What these tests cannot show is how a real GPU behaves;
the records they check are the ones a real run produces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from precisionlint.advise import advisor  # noqa: E402
from precisionlint.advise.probe import judge, measure  # noqa: E402
from precisionlint.advise.probe.results import ProbeResult  # noqa: E402
from precisionlint.advise.probe.shapes import parse_shapes  # noqa: E402
from precisionlint.cli.advise_command import advise  # noqa: E402
from tests.simulated_gpu import H100_RATES, SimulatedCard, install_nvidia_smi, simulated_gpus  # noqa: E402

SIZE = 128  # real CPU matmuls of this size; the simulated clock charges them at the card's rate
BUDGET = 6.0


def _run(monkeypatch: pytest.MonkeyPatch, *cards: SimulatedCard, **kwargs: object) -> ProbeResult:
    with simulated_gpus(monkeypatch, *cards):
        return measure.run_probe(budget_s=BUDGET, size=SIZE, **kwargs)  # type: ignore[arg-type]


def test_every_format_of_an_h100_is_measured_through_its_own_api(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    card = SimulatedCard()
    with simulated_gpus(monkeypatch, card) as cuda:
        result = measure.run_probe(budget_s=BUDGET, size=SIZE)
    assert result.device.name == "NVIDIA H100 80GB HBM3" and result.device.compute_capability == (9, 0)
    assert result.device.uuid == "GPU-" + card.uuid
    assert [t.fmt for t in result.timings] == ["fp32", "tf32", "bf16", "fp16", "fp8", "fp8-fast"]
    # Each format ran the kernel it names: the simulation saw TF32 only while the probe had switched it on,
    # and both fp8 variants (fast accumulation on and off) through torch.nn.functional.scaled_mm.
    assert {"fp32", "tf32", "bf16", "fp16", "fp8", "fp8-fast"} <= set(card.by_format)
    assert result.timing("fp8").api == "torch.nn.functional.scaled_mm"  # type: ignore[union-attr]
    assert result.timing("bf16").api == "torch.mm"  # type: ignore[union-attr]
    assert torch.get_float32_matmul_precision() == "highest"  # restored
    assert cuda.synchronized > 0
    for t in result.timings:
        # The median is the card's rate: FLOPs over the events' seconds, one event pair per batch.
        assert t.tflops == pytest.approx(H100_RATES[t.fmt], rel=0.03), t.fmt
        assert t.warmup_batches >= 1  # how many depends on this busy CPU; tests of timing.measure check the rule
        assert 3 <= t.repeats == len(t.samples_s) and t.spread < 0.05
    # Judged against the H100 SXM's datasheet and the best published measurement.
    bf16 = result.timing("bf16")
    assert bf16 is not None and bf16.peak_tflops == 989.4 and bf16.achievable_tflops == 794.5
    fast = result.timing("fp8-fast")
    assert fast is not None and fast.peak_tflops == 1978.9 and fast.achievable_tflops is None  # none published
    assert {v.fmt: v.status for v in judge.verdicts(result)} == {
        "fp32": "unjudged", "tf32": "unjudged", "bf16": "ok", "fp16": "unjudged", "fp8": "ok", "fp8-fast": "unjudged"}
    errors = {n.fmt: n.relative_error for n in result.numerics}
    assert errors["fp32"] < 1e-5 < errors["tf32"] and errors["fp32"] < errors["fp16"] < errors["bf16"] < errors["fp8"]
    assert result.telemetry is None and result.peers == ()
    assert_same_record(ProbeResult.from_json(json.loads(json.dumps(result.to_json()))).to_json(), result.to_json())


def assert_same_record(a: object, b: object) -> None:
    """Equal JSON records, floats to 1e-3 (the JSON rounds derived figures to 4 significant digits)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same_record(a[key], b[key])
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same_record(x, y)
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-3)
    else:
        assert a == b


def test_h100_recommendation_is_bf16_mixed_with_the_fp8_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(monkeypatch, SimulatedCard())
    rec = advisor.recommend(probe=result)  # no --params: the large-model branch
    assert rec.precision == "bf16-mixed" and rec.tf32_matmul_precision is None and not rec.grad_scaler
    assert rec.measured and rec.targets == ("H100 SXM",)
    fp8_note = next(n for n in rec.notes if n.startswith("FP8 is available on this GPU"))
    fp8 = result.timing("fp8")
    assert fp8 is not None and f"measured {fp8.tflops:.0f} TFLOP/s" in fp8_note
    assert "fast accumulation" in fp8_note and "Transformer Engine" in fp8_note
    bf16_line = next(e for e in rec.evidence if e.startswith("bf16 matmul"))
    assert "% of the 989.4 TFLOP/s datasheet peak" in bf16_line
    assert "% of the 794.5 TFLOP/s best published measurement: as fast as this card gets." in bf16_line


def test_a_throttled_card_is_called_slow_with_the_reasons(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    card = SimulatedCard(rates={**H100_RATES, "bf16": 590.0, "fp8": 1000.0})
    install_nvidia_smi(tmp_path, monkeypatch, sm="1410", sm_max="1980", power="699.1", limit="700.00",
                       reasons="0x0000000000000004",
                       apps=f"GPU-{card.uuid}, 4242, python, 20480\nGPU-other, 777, python, 100")
    result = _run(monkeypatch, card)
    telemetry = result.telemetry
    assert telemetry is not None and telemetry.samples >= 1
    assert telemetry.sm_clock_mhz == 1410 and telemetry.sm_clock_max_mhz == 1980
    assert telemetry.throttle_reasons == ("sw_power_cap",)
    assert telemetry.other_processes == ((4242, "python", 20480.0),)  # the other GPU's process is not ours
    verdict = next(v for v in judge.verdicts(result) if v.fmt == "bf16")
    assert verdict.status == "low" and verdict.fraction_of_achievable == pytest.approx(590 / 794.5, rel=0.03)
    causes = " | ".join(verdict.causes)
    assert "the SM clock ran at 1410 of 1980 MHz" in causes
    assert "sw_power_cap" in causes and "power draw reached 699 W of the 700 W limit" in causes
    assert "pid 4242 (python, 20480 MiB)" in causes
    assert "the 128x128 matrices are small for this card" in causes
    assert "below 85% of what this card achieves" in verdict.sentence
    readings = [e for e in advisor.evidence(result) if e.startswith("Driver readings")]
    assert readings == [f"Driver readings during the run (nvidia-smi, {telemetry.samples} samples): SM clock 1410 of "
                        "1980 MHz; power up to 699 of 700 W; throttle reasons: sw_power_cap; other processes on the "
                        "GPU: 1."]


def test_an_old_driver_without_clocks_event_reasons(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    install_nvidia_smi(tmp_path, monkeypatch, reasons="0x0000000000000040", event_reasons=False)
    result = _run(monkeypatch, SimulatedCard())
    assert result.telemetry is not None and result.telemetry.throttle_reasons == ("hw_thermal_slowdown",)


def test_without_nvidia_smi_a_slow_card_says_it_has_no_readings(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = _run(monkeypatch, SimulatedCard(rates={**H100_RATES, "bf16": 500.0}))
    verdict = next(v for v in judge.verdicts(result) if v.fmt == "bf16")
    assert verdict.status == "low" and any("no clock or power readings" in c for c in verdict.causes)


def test_a_slow_card_in_a_node_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    slow = SimulatedCard(uuid="5b8e6a52-0000-4000-8000-000000000001",
                         rates={fmt: rate * 0.7 for fmt, rate in H100_RATES.items()})
    same = SimulatedCard(uuid="5b8e6a52-0000-4000-8000-000000000002")
    result = _run(monkeypatch, SimulatedCard(), slow, same)
    assert [p.device.index for p in result.peers] == [1, 2]
    first, second = result.peers
    assert first.differs and "30% slower than GPU 0" in first.sentence and "a slow card in this node" in first.sentence
    assert not second.differs and "within the run's spread" in second.sentence
    assert first.timing is not None and first.timing.fmt == "bf16"


def test_device_option_measures_that_gpu_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    other = SimulatedCard(name="NVIDIA A100-SXM4-80GB", major=8, minor=0, uuid="a100",
                          rates={"fp64": 19.0, "fp32": 19.0, "tf32": 140.0, "bf16": 270.0, "fp16": 275.0})
    result = _run(monkeypatch, SimulatedCard(), other, device_index=1)
    assert result.device.index == 1 and result.device.name == "NVIDIA A100-SXM4-80GB" and result.peers == ()
    assert [t.fmt for t in result.timings] == ["fp32", "tf32", "bf16", "fp16"]
    assert [s.fmt for s in result.skipped] == ["fp8"]
    with pytest.raises(ValueError, match="no such device"):
        _run(monkeypatch, SimulatedCard(), device_index=3)


def test_user_shapes_are_timed_beside_the_square_reference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    shapes = parse_shapes("256x512x384,200x256x256")
    result = _run(monkeypatch, SimulatedCard(), shapes=shapes)
    assert [(t.shape, t.fmt, t.dims) for t in result.shape_timings] == [
        ("256x512x384", "bf16", (256, 512, 384)), ("200x256x256", "bf16", (200, 256, 256))]
    for t in result.shape_timings:
        assert t.tflops == pytest.approx(H100_RATES["bf16"], rel=0.03)
    assert [(a.shape, a.dimension, a.multiple) for a in result.alignment] == [("200x256x256", "M", 16)]


def test_the_command_on_a_simulated_h100(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    report = tmp_path / "probe.html"
    with simulated_gpus(monkeypatch, SimulatedCard()):
        result = CliRunner().invoke(advise, ["--probe", "--budget", str(BUDGET), "--size", str(SIZE),
                                             "--output-format", "json", "--report", str(report)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["recommendation"]["precision"] == "bf16-mixed"
    assert data["targets"][0]["name"] == "H100 SXM"
    verdicts = {v["format"]: v for v in data["probe"]["verdicts"]}
    assert verdicts["bf16"]["status"] == "ok" and verdicts["bf16"]["achievable_tflops"] == 794.5
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
