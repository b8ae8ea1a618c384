"""The published figures the probe judges a card against (hardware/achievable.py): which exist, which is chosen for
a measurement, and how the command names it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from precisionlint.hardware.achievable import ACHIEVABLE_TFLOPS, TYPICAL_TFLOPS, Achievable, achievable
from precisionlint.hardware.gpu import Gpu
from precisionlint.hardware.names import find_gpu

GEFORCE_BOOST = 1.25  # GeForce cards run above the boost clock their datasheet figures assume


def _gpu(name: str) -> Gpu:
    gpu = find_gpu(name)
    assert gpu is not None, name
    return gpu


def test_published_figures_sit_below_the_datasheet() -> None:
    for table in (ACHIEVABLE_TFLOPS, TYPICAL_TFLOPS):
        for name, figures in table.items():
            gpu = find_gpu(name)
            assert gpu is None or gpu.name == name, name  # keyed by the table's own names
            for fmt, figure in figures.items():
                assert figure.tflops > 0 and figure.source.startswith("https://") and len(figure.dims) == 3
                assert figure.kind == ("maximum" if table is ACHIEVABLE_TFLOPS else "typical")
                peak = gpu.peak_tflops.get(fmt) if gpu is not None else None  # MI355X: not in the table yet
                if peak is None:
                    continue
                if name.startswith("RTX ") and name != "RTX A6000":
                    assert figure.tflops < GEFORCE_BOOST * peak, (name, fmt)
                    if figure.tflops > peak:
                        assert "boost" in figure.note, (name, fmt)  # says why it is above the datasheet
                else:
                    assert figure.tflops < peak, (name, fmt)


def test_hopper_and_blackwell_references() -> None:
    for name in ("NVIDIA H100 80GB HBM3", "NVIDIA H200"):
        bf16 = achievable(_gpu(name), "bf16")
        assert bf16 is not None and 780 <= bf16.tflops <= 800 and bf16.kind == "maximum"
    gb200 = _gpu("NVIDIA GB200")
    assert achievable(gb200, "bf16") == Achievable(1822.0, "4096x9728x2048", "2.10.0.dev20250916+cu130")
    fp8 = achievable(gb200, "fp8")
    assert fp8 is not None and fp8.tflops == 3615.6 and fp8.dims == (19456, 5120, 1536)


@pytest.mark.parametrize("name", ["L4", "L40", "L40S", "RTX 4080", "RTX 4090"])
def test_no_fp8_reference_for_ada(name: str) -> None:
    # Nobody published an achievable fp8 figure for an Ada card: its fp8 stays unjudged rather than guessed.
    assert achievable(_gpu(name), "fp8") is None
    assert achievable(_gpu(name), "fp8-fast") is None


def test_a_figure_measured_at_the_probes_size_comes_first() -> None:
    rtx4090 = _gpu("NVIDIA GeForce RTX 4090")
    at_8192 = achievable(rtx4090, "bf16", (8192, 8192, 8192))
    assert at_8192 is not None and at_8192.kind == "typical" and at_8192.tflops == 148.45
    elsewhere = achievable(rtx4090, "bf16", (4096, 4096, 4096))
    assert elsewhere is not None and elsewhere.kind == "maximum" and elsewhere.tflops == 178.5
    tf32 = achievable(_gpu("A100"), "tf32", (8192, 8192, 8192))  # only a typical figure, at 10240
    assert tf32 is not None and tf32.kind == "typical" and tf32.dims == (10240, 10240, 10240)
    assert tf32.tflops == pytest.approx(2 * 10240**3 / 0.016 / 1e12, rel=1e-3)
    assert achievable(_gpu("A100"), "fp32") is None
    assert achievable(_gpu("B200"), "bf16", (8192, 8192, 8192)).kind == "maximum"  # type: ignore[union-attr]


def test_the_command_names_a_typical_figure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    assert torch is not None
    from click.testing import CliRunner

    from precisionlint.cli.advise_command import advise
    from tests.simulated_gpu import SimulatedCard, simulated_gpus

    # A figure published at the size this test measures (128-cubed, so that the CPU runs the matmuls quickly).
    monkeypatch.setitem(TYPICAL_TFLOPS, "RTX 4090", {
        "bf16": Achievable(150.0, "128x128x128", "", "https://example.org/a-typical-run", kind="typical")})
    monkeypatch.setenv("PATH", str(tmp_path))
    card = SimulatedCard(name="NVIDIA GeForce RTX 4090", major=8, minor=9, total_memory=24 * 2**30,
                         multi_processor_count=128,
                         rates={"fp64": 1.3, "fp32": 80.0, "tf32": 82.0, "bf16": 140.0, "fp16": 160.0, "fp8": 300.0,
                                "fp8-fast": 310.0})
    report = tmp_path / "probe.html"
    with simulated_gpus(monkeypatch, card):
        result = CliRunner().invoke(advise, ["--probe", "--budget", "6", "--size", "128", "--output-format", "json",
                                             "--report", str(report)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    verdicts = {v["format"]: v for v in data["probe"]["verdicts"]}
    bf16 = verdicts["bf16"]
    assert bf16["achievable_tflops"] == 150.0 and bf16["status"] == "ok"
    assert bf16["reference"] == "typical published measurement at 128x128x128"
    assert re.search(r"9\d% of the 150 TFLOP/s typical published measurement at 128x128x128: as fast as this card "
                     r"gets\.", bf16["sentence"]), bf16["sentence"]
    assert verdicts["fp8"]["status"] == "unjudged" and verdicts["fp8"]["reference"] is None
    timing = next(t for t in data["probe"]["timings"] if t["format"] == "bf16")
    assert timing["reference_source"] == "https://example.org/a-typical-run"
    html = report.read_text(encoding="utf-8")
    assert "solid line: typical published measurement" in html
    assert "Typical published measurement at 128x128x128: https://example.org/a-typical-run" in html


def test_a_maximum_of_another_shape_names_it_and_that_shape_is_judged(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    # A square matmul below 85% of a maximum published for another shape may be a healthy card (a B200 measured
    # 81% at 8192-cubed): the verdict says which shape the figure is for, and --shapes with it is judged like
    # for like. A small stand-in for the H100's 2048x2048x13312, so that the CPU runs the matmuls quickly.
    pytest.importorskip("torch")
    from click.testing import CliRunner

    from precisionlint.cli.advise_command import advise
    from tests.simulated_gpu import H100_RATES, SimulatedCard, simulated_gpus

    monkeypatch.setitem(ACHIEVABLE_TFLOPS, "H100 SXM", {"bf16": Achievable(794.5, "256x512x384", "")})
    monkeypatch.setenv("PATH", str(tmp_path))
    with simulated_gpus(monkeypatch, SimulatedCard(rates={**H100_RATES, "bf16": 600.0})):
        result = CliRunner().invoke(advise, ["--probe", "--budget", "6", "--size", "128", "--shapes", "256x512x384",
                                             "--output-format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    square = next(v for v in data["probe"]["verdicts"] if v["format"] == "bf16")
    assert square["status"] == "low"
    assert square["causes"][0] == (
        "the best published measurement was made at 256x512x384, the best shape of a search, and a 128x128x128 "
        "matmul can reach less on a healthy card: time that shape with --shapes 256x512x384 to compare like with "
        "like")
    (shaped,) = data["probe"]["shape_timings"]
    assert shaped["achievable_tflops"] == 794.5 and shaped["reference_shape"] == "256x512x384"
    evidence = " ".join(data["recommendation"]["evidence"])
    assert re.search(r"bf16 256x512x384 \(256x512x384\): \d+ TFLOP/s \(median of [^)]*\), \d+% of the 989.4 TFLOP/s "
                     r"datasheet peak, 7\d% of the 794.5 TFLOP/s best published measurement, made at this shape: "
                     r"below 85% of what this card achieves", evidence), evidence
