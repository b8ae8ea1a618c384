"""The HTML report, read back: parsed, compared with the JSON it was drawn from, and rendered in a real browser."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from precisionlint.advise.probe import report, shapes  # noqa: E402
from precisionlint.cli.advise_command import advise  # noqa: E402
from tests.simulated_gpu import H100_RATES, SimulatedCard, install_nvidia_smi, simulated_gpus  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell")


class _Page(HTMLParser):
    """Collects every element's tag and attributes, the text, and any reference to another resource."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in ("meta", "br", "rect", "line", "path"):
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("rect", "line", "path"):
            return
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def having(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and cls in a.get("class", "").split()]


@pytest.fixture(scope="module")
def simulated_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    """`advise --probe --report` on a simulated, power-capped H100 with a model config: JSON and HTML of one run."""
    folder = tmp_path_factory.mktemp("report")
    config = folder / "config.json"
    config.write_text(json.dumps({"hidden_size": 256, "intermediate_size": 688, "num_attention_heads": 4,
                                  "num_key_value_heads": 2, "vocab_size": 1001}))
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(shapes, "DEFAULT_TOKENS", 128)  # CPU-sized matmuls: the simulated card charges the time
    card = SimulatedCard(rates={**H100_RATES, "bf16": 600.0})
    install_nvidia_smi(folder, monkeypatch, sm="1500", reasons="0x0000000000000004")
    out = folder / "probe.html"
    try:
        with simulated_gpus(monkeypatch, card):
            result = CliRunner().invoke(advise, ["--probe", "--budget", "6", "--size", "128", "--shapes", str(config),
                                                 "--params", "7B", "--output-format", "json", "--report", str(out)])
    finally:
        monkeypatch.undo()
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), out.read_text(encoding="utf-8"), out


def test_bars_match_the_json(simulated_run: tuple[dict[str, Any], str, Path]) -> None:
    data, html, _ = simulated_run
    page = _Page()
    page.feed(html)
    page.close()
    assert page.open == []  # every element closed in order
    timings = data["probe"]["timings"]
    bars = page.having("rect", "bar")
    assert [b["data-format"] for b in bars] == [t["format"] for t in timings]
    assert [float(b["data-tflops"]) for b in bars] == [t["tflops"] for t in timings]
    (chart,) = [a for t, a in page.elements if t == "svg" and "throughput" in a.get("class", "")]
    scale = float(chart["data-scale"])
    for bar, t in zip(bars, timings, strict=True):  # the drawn length is the figure on one shared scale
        assert float(bar["width"]) == pytest.approx(t["tflops"] / scale * report.CHART_WIDTH, abs=0.01)
    peaks = {a["data-format"]: float(a["data-tflops"]) for a in page.having("line", "peak")}
    assert peaks == {t["format"]: t["peak_tflops"] for t in timings if t["peak_tflops"]}
    achievable = {a["data-format"]: float(a["data-tflops"]) for a in page.having("line", "achievable")}
    assert achievable == {"bf16": 794.5, "fp8": 1402.6}
    colours = {b["data-format"]: b["fill"] for b in bars}
    assert colours["bf16"] == report.STATUS_COLOURS["low"] and colours["fp8"] == report.STATUS_COLOURS["ok"]
    errors = page.having("rect", "error-bar")
    assert [(e["data-format"], float(e["data-relative-error"])) for e in errors] == [
        (n["fmt"], n["relative_error"]) for n in data["probe"]["numerics"]]
    widths = {e["data-format"]: float(e["width"]) for e in errors}
    assert widths["fp32"] < widths["bf16"] < widths["fp8"]  # less exact, longer bar


def test_the_page_shows_the_recommendation_path_and_causes(simulated_run: tuple[dict[str, Any], str, Path]) -> None:
    data, html, _ = simulated_run
    page = _Page()
    page.feed(html)
    text = " ".join(" ".join(page.text).split())
    rec = data["recommendation"]
    assert rec["precision"] == "bf16-mixed"
    assert [a for t, a in page.elements if t == "b" and a.get("data-precision")] == [{"data-precision": "bf16-mixed"}]
    for step in rec["path"]:
        assert " ".join(step["question"].split()) in text
    assert any(n.startswith("FP8 is available on this GPU") for n in rec["notes"])
    low = next(v for v in data["probe"]["verdicts"] if v["format"] == "bf16")
    assert low["status"] == "low" and " ".join(low["sentence"].split()) in text
    assert "sw_power_cap" in text and "the SM clock ran at 1500 of 1980 MHz" in text
    # The model's shapes, timed, and the vocabulary of 1001 flagged statically.
    # (on this busy CPU the budget may run out before the last ones: those are listed as not measured)
    timed = [t["shape"] for t in data["probe"]["shape_timings"]]
    not_timed = [s["fmt"].removeprefix("bf16 ") for s in data["probe"]["skipped"] if s["fmt"].startswith("bf16 ")]
    assert timed[:1] == ["attention qkv"]
    assert timed + not_timed == ["attention qkv", "attention out", "mlp up", "mlp down", "lm head"]
    for name in timed:
        assert f">{name}<" in html
    assert "lm head: N = 1001 is not a multiple of 8" in text
    assert "mlp up: N = 688 is not a multiple of 64" in text  # 688 = 16 x 43
    # Self-contained: no script, no link to anything outside the file.
    for tag, attrs in page.elements:
        assert tag not in ("script", "link", "img", "iframe")
        assert not any(v.startswith(("http:", "https:", "//")) for k, v in attrs.items() if k in ("src", "href"))


def _browser() -> str | None:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def test_the_page_renders_in_a_headless_browser(simulated_run: tuple[dict[str, Any], str, Path],
                                               tmp_path: Path) -> None:
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium or Chrome installed (apt-get install chromium)")
    _, _, page = simulated_run
    shot = tmp_path / "probe.png"
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1000,1800", f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real picture, not a blank page
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    assert (width, height) == (1000, 1800)
    # Enough distinct colours that the chart bars were drawn, not only text on white.
    dumped = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert dumped.returncode == 0 and 'class="bar"' in dumped.stdout


def test_shapes_without_probe_report_alignment_statically(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_inner": None}))
    result = CliRunner().invoke(advise, ["--gpu", "H100", "--shapes", str(config), "--output-format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["probe"] is None
    assert [s["name"] for s in data["shapes"]] == ["attention qkv", "attention out", "mlp up", "mlp down", "lm head"]
    assert [(a["shape"], a["dimension"], a["value"], a["multiple"]) for a in data["alignment"]] == [
        ("lm head", "N", 50257, 8)]
    assert "pad to 50304" in data["alignment"][0]["consequence"]
    text = CliRunner().invoke(advise, ["--gpu", "H100", "--shapes", "4096x4096x4096"])
    assert text.exit_code == 0 and "Every dimension is a multiple of 64" in text.stdout


@pytest.mark.parametrize("spec,message", [
    ("12x34", "is neither MxNxK"),
    ("missing.json", "missing.json: cannot read"),
    ("0x8x8", "has a zero dimension"),
])
def test_bad_shapes_are_one_line_usage_errors(spec: str, message: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(advise, ["--gpu", "H100", "--shapes", spec])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_a_config_that_is_not_json_names_the_position(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"hidden_size": 4096,\n  oops}')
    result = CliRunner().invoke(advise, ["--gpu", "H100", "--shapes", str(config)])
    assert result.exit_code == 2 and f"{config}:2:3: not valid JSON" in result.stderr
