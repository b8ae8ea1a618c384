"""Honest figures from `advise --probe`, through the real command: ratios and percentages only to the digits their
batches support, a legend of what is drawn, nothing on stderr but what precisionlint says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from precisionlint.advise.probe import figures  # noqa: E402
from precisionlint.advise.probe.results import Timing  # noqa: E402
from precisionlint.cli.advise_command import advise  # noqa: E402
from tests.simulated_gpu import SimulatedCard, simulated_gpus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NO_GPU = not torch.cuda.is_available()


def _precisionlint(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


def test_the_probe_prints_no_library_warning() -> None:
    # torch without NumPy warns on import ("Failed to initialize NumPy"); the probe never uses NumPy.
    done = _precisionlint("advise", "--probe", "--budget", "1", "--size", "64", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    json.loads(done.stdout)


def test_only_the_numpy_message_of_the_torch_import_is_ignored() -> None:
    # In a fresh interpreter (torch not yet imported): the import says nothing, and the filter ends with it.
    code = (
        "import warnings\n"
        "from precisionlint.advise.probe import device\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    device.import_torch()\n"
        "    warnings.warn('Failed to initialize NumPy: after the import', UserWarning)\n"
        "    warnings.warn(\"another library's warning\", UserWarning)\n"
        "print([str(w.message) for w in seen])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["Failed to initialize NumPy: after the import", "another library's warning"])


def test_report_says_where_it_wrote(tmp_path: Path) -> None:
    report = tmp_path / "probe.html"
    done = _precisionlint("advise", "--probe", "--budget", "1", "--size", "64", "--output-format", "json",
                          "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"precisionlint: wrote {report}\n"
    json.loads(done.stdout)  # stdout is still the JSON alone
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_a_cpu_report_has_no_legend_for_lines_it_does_not_draw(tmp_path: Path) -> None:
    report = tmp_path / "cpu.html"
    result = CliRunner().invoke(advise, ["--probe", "--budget", "1", "--size", "64", "--report", str(report)])
    assert result.exit_code == 0, result.output
    html = report.read_text(encoding="utf-8")
    (legend,) = re.findall(r'<p class="legend">(.*?)</p>', html)
    assert legend == "<span>bar: measured (median)</span>"
    assert 'class="peak"' not in html and 'class="achievable"' not in html  # no line drawn either


def test_a_simulated_h100_legend_names_what_is_drawn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    report = tmp_path / "h100.html"
    with simulated_gpus(monkeypatch, SimulatedCard()):
        result = CliRunner().invoke(advise, ["--probe", "--budget", "6", "--size", "128", "--report", str(report)])
    assert result.exit_code == 0, result.output
    (legend,) = re.findall(r'<p class="legend">(.*?)</p>', report.read_text(encoding="utf-8"))
    assert "dashed line: datasheet dense peak" in legend and "solid line: best published measurement" in legend
    assert "green: " in legend and "blue: " in legend  # bf16 and fp8 judged ok, fp32 and fp16 unjudged
    assert "red: below" not in legend  # nothing is slow


def test_unsteady_batches_make_ratios_and_percentages_rounded_and_marked(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    # fp32's batches alternate between the card's time and 3x it (a spread of 200%), bf16's by 1.5x (50%).
    monkeypatch.setenv("PATH", str(tmp_path))
    card = SimulatedCard(unsteady={"fp32": 3.0, "bf16": 1.5})
    report = tmp_path / "probe.html"
    with simulated_gpus(monkeypatch, card):
        # A generous budget: on a busy machine a short one leaves the last formats one batch each (unreliable too)
        text = CliRunner().invoke(advise, ["--probe", "--budget", "10", "--size", "128", "--report", str(report)])
    assert text.exit_code == 0, text.output
    out = " ".join(text.stdout.split())
    tf32_step = re.search(r"TF32 matmuls run at (about \d+x) the IEEE float32 rate here \(measured figures; "
                          r"unreliable: the batches spread (\d+)% \(fp32\) and (\d+)% \(tf32\), so anywhere from "
                          r"([\d.]+)x to ([\d.]+)x; rerun on an idle machine or with a larger --budget\)", out)
    assert tf32_step, out
    assert int(tf32_step[2]) > 60 and int(tf32_step[3]) < 25  # (3 - 1) / median, the median 1x to 3x
    assert re.fullmatch(r"about [1-9]0?x", tf32_step[1])  # one significant digit, nothing like "7.3x"
    assert float(tf32_step[4]) < float(tf32_step[5])
    # bf16 against a steady TF32: a ratio of two medians, one of them unsteady, is rounded too.
    assert re.search(r"bf16 matmuls run at about \d+x the TF32 rate here \(measured figures; unreliable", out)
    bf16 = re.search(r"bf16 matmul 128x128: [\d.]+ TFLOP/s \(median[^)]*\), (about \d+0)% of the 989.4 TFLOP/s "
                     r"datasheet peak, (about \d+0)% of the 794.5 TFLOP/s best published measurement \(unreliable: "
                     r"the bf16 batches spread (\d+)%, more than 25%; rerun on an idle machine or with a larger "
                     r"--budget\): probably", out)
    assert bf16, out
    # Steady formats keep their two digits and say nothing of reliability.
    fp8 = re.search(r"fp8 matmul 128x128: [\d.]+ TFLOP/s \([^)]*\), (\d+)% of the 1978.9 TFLOP/s datasheet peak, "
                    r"(\d+)% of the 1402.6 TFLOP/s best published measurement: as fast as this card gets\.", out)
    assert fp8, out
    html = report.read_text(encoding="utf-8")
    assert "Unreliable (fp32: spread " in html and "bf16: spread " in html
    assert re.search(r"~\d+0%", html)  # the table's rounded percentages

    with simulated_gpus(monkeypatch, SimulatedCard(unsteady={"fp32": 3.0, "bf16": 1.5})):
        as_json = CliRunner().invoke(advise, ["--probe", "--budget", "10", "--size", "128", "--output-format",
                                              "json"])
    data = json.loads(as_json.stdout)
    reliable = {t["format"]: t["reliable"] for t in data["probe"]["timings"]}
    batches = {t["format"]: len(t["samples_ms"]) for t in data["probe"]["timings"]}
    assert reliable == {fmt: fmt not in ("fp32", "bf16") and batches[fmt] > 1 for fmt in reliable}
    verdicts = {v["format"]: v["reliable"] for v in data["probe"]["verdicts"]}
    assert verdicts == reliable


@pytest.mark.parametrize("value,text", [(14.2, "10"), (2.6, "3"), (0.43, "0.4"), (0.0607, "0.06"), (96.0, "100"),
                                        (1.0, "1")])
def test_one_significant_digit(value: float, text: str) -> None:
    assert figures.one_digit(value) == text


def test_a_ratio_of_steady_timings_keeps_two_digits() -> None:
    fast = Timing("bf16", 1024, 0.001, 3, samples_s=(0.00100, 0.00101, 0.00099))
    slow = Timing("fp32", 1024, 0.0026, 3, samples_s=(0.0026, 0.00262, 0.00258))
    assert figures.ratio_text(fast, slow) == ("2.6x", "")
    # The issue's CPU run: the fp32 batches spread 423%, bf16's 94%: no "14x".
    shaky = Timing("fp32", 1024, 0.014, 3, samples_s=(0.005, 0.014, 0.0642))
    text, caveat = figures.ratio_text(fast, shaky)
    assert text == "about 10x"
    assert caveat.startswith("unreliable: the batches spread 423% (fp32) and 2% (bf16), so anywhere from 5x to 65x;")


def test_a_figure_from_one_batch_is_not_reliable() -> None:
    # Past the budget a format gets one timed batch: no spread to show, so no two-digit ratio either.
    fast = Timing("bf16", 1024, 0.001, 3, samples_s=(0.00100, 0.00101, 0.00099))
    once = Timing("fp32", 1024, 0.0026, 1, samples_s=(0.0026,))
    assert once.spread == 0.0 and not once.reliable
    text, caveat = figures.ratio_text(fast, once)
    assert text == "about 3x"
    assert caveat == ("unreliable: the batches spread 2% (bf16); fp32 had one timed batch; rerun on an idle machine "
                      "or with a larger --budget")
    assert figures.unreliable_note("fp32", 0.0, 1).startswith("unreliable: one timed batch of fp32")
    assert Timing("fp32", 1024, 0.0026, 9).reliable  # a record without its batches is taken as it is
