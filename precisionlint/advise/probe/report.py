"""`advise --probe --report FILE`: the measurements as one self-contained HTML page.

Drawn from the same JSON payload `--output-format json` prints, so the page shows nothing the JSON lacks. No
script, no external style sheet, font or image: inline CSS and SVG only, so the file opens offline and can be
attached to a ticket. Every bar carries its figure in data-* attributes (data-format, data-tflops), which is
what the tests read back.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from precisionlint.advise.probe.figures import RERUN_HINT, percent_text
from precisionlint.advise.probe.judge import HEALTHY_FRACTION
from precisionlint.advise.probe.results import REFERENCE_MAXIMUM, UNRELIABLE_SPREAD

CHART_WIDTH = 500  # the drawing area of the bars, in SVG units
LABEL_WIDTH = 90
TEXT_WIDTH = 340  # the figures, in a column right of the bars
ROW_HEIGHT = 30
BAR_HEIGHT = 18
ERROR_FLOOR = 1e-8  # the error chart's log axis runs from here to 1
STATUS_COLOURS = {"ok": "#2e7d32", "low": "#c62828", "unjudged": "#1565c0"}

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1b1b;margin:2em auto;max-width:980px;
padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #ddd}
.sub{color:#555}.rec{background:#f3f7f3;border:1px solid #cfe3cf;border-radius:6px;padding:.6em 1em}
.rec b{font-size:1.2em}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;
text-align:right}th{background:#f5f5f5}td.l,th.l{text-align:left}.low{color:#c62828}.ok{color:#2e7d32}
svg text{font:12px system-ui,sans-serif}ol li{margin-bottom:.4em}.why{color:#444}.legend span{margin-right:1.2em}
code{background:#f5f5f5;padding:0 3px}
"""


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if abs(value) < 10 ** digits else f"{value:.0f}"


def _pct(value: float | None, reliable: bool = True) -> str:
    if value is None:
        return "-"
    return percent_text(value, reliable).replace("about ", "~")


def _reliable(timing: dict[str, Any]) -> bool:
    """The JSON's `reliable`, or from the spread for a run saved before the JSON carried it."""
    return bool(timing.get("reliable", timing["spread"] <= UNRELIABLE_SPREAD))


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def throughput_chart(timings: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> str:
    """Horizontal bars of measured TFLOP/s per format, with the datasheet peak (dashed) and the best published
    measurement (solid) marked on each row. One scale for every row: the largest of all three figures."""
    status = {v["format"]: v["status"] for v in verdicts}
    scale = max([t["tflops"] for t in timings]
                + [t["peak_tflops"] or 0 for t in timings]
                + [t["achievable_tflops"] or 0 for t in timings] + [1e-12]) * 1.05
    height = ROW_HEIGHT * len(timings) + 16
    width = LABEL_WIDTH + CHART_WIDTH + TEXT_WIDTH
    out = [f'<svg class="chart throughput" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" data-scale="{scale!r}" role="img" '
           'aria-label="matmul throughput per format against the datasheet peak and the best published measurement">']
    for row, t in enumerate(timings):
        y = 10 + row * ROW_HEIGHT
        fmt = t["format"]
        colour = STATUS_COLOURS.get(status.get(fmt, "unjudged"), STATUS_COLOURS["unjudged"])
        bar = t["tflops"] / scale * CHART_WIDTH
        out.append(f'<text x="{LABEL_WIDTH - 8}" y="{y + BAR_HEIGHT - 4}" text-anchor="end">{_e(fmt)}</text>')
        out.append(f'<rect class="bar" data-format="{_e(fmt)}" data-tflops="{t["tflops"]!r}" x="{LABEL_WIDTH}" '
                   f'y="{y}" width="{bar:.3f}" height="{BAR_HEIGHT}" fill="{colour}"/>')
        for kind, key, dash in (("peak", "peak_tflops", ' stroke-dasharray="4 3"'), ("achievable",
                                                                                      "achievable_tflops", "")):
            if t.get(key):
                x = LABEL_WIDTH + t[key] / scale * CHART_WIDTH
                out.append(f'<line class="{kind}" data-format="{_e(fmt)}" data-tflops="{t[key]!r}" x1="{x:.3f}" '
                           f'x2="{x:.3f}" y1="{y - 4}" y2="{y + BAR_HEIGHT + 4}" stroke="#222" stroke-width="2"'
                           f'{dash}/>')
        parts = [f"{_fmt(t['tflops'])} TFLOP/s"]
        if t.get("fraction_of_peak") is not None:
            parts.append(f"{_pct(t['fraction_of_peak'], _reliable(t))} of datasheet")
        if t.get("fraction_of_achievable") is not None:
            parts.append(f"{_pct(t['fraction_of_achievable'], _reliable(t))} of achievable")
        if not _reliable(t):
            parts.append("unreliable")
        out.append(f'<text x="{LABEL_WIDTH + CHART_WIDTH + 12}" y="{y + BAR_HEIGHT - 4}" fill="#333">'
                   f'{_e(", ".join(parts))}</text>')
    out.append("</svg>")
    return "".join(out)


def legend(timings: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> str:
    """What the throughput chart draws, and only that: a CPU run has no reference lines and no verdicts."""
    status = {v["format"]: v["status"] for v in verdicts}
    drawn = {status.get(t["format"], "unjudged") for t in timings}
    items = ['<span>bar: measured (median)</span>']
    if any(t.get("peak_tflops") for t in timings):
        items.append('<span class="peak">dashed line: datasheet dense peak</span>')
    colours: tuple[tuple[str, str], ...] = ()
    if any(t.get("achievable_tflops") for t in timings):
        kinds = {t.get("reference") or REFERENCE_MAXIMUM for t in timings if t.get("achievable_tflops")}
        what = (REFERENCE_MAXIMUM if kinds == {REFERENCE_MAXIMUM}
                else "typical published measurement" if REFERENCE_MAXIMUM not in kinds
                else "published measurement (the best, or a typical one where the table says so)")
        items.append(f'<span class="achievable">solid line: {what}</span>')
        colours = (("ok", f"green: at least {HEALTHY_FRACTION:.0%} of it"), ("low", "red: below"),
                   ("unjudged", "blue: no published measurement"))
    # Without a published measurement nothing is judged, and every bar is drawn in one colour.
    for key, text in colours:
        if key in drawn:
            items.append(f'<span class="{key}" style="color:{STATUS_COLOURS[key]}">{_e(text)}</span>')
    return '<p class="legend">' + "".join(items) + "</p>"


def error_chart(numerics: list[dict[str, Any]]) -> str:
    """Relative error per format on a log axis from ERROR_FLOOR to 1 (longer bar: less exact)."""
    decades = -math.log10(ERROR_FLOOR)
    height = ROW_HEIGHT * len(numerics) + 36
    width = LABEL_WIDTH + CHART_WIDTH + TEXT_WIDTH
    out = [f'<svg class="chart errors" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="relative error per format against float64">']
    for row, n in enumerate(numerics):
        y = 6 + row * ROW_HEIGHT
        error = max(float(n["relative_error"]), ERROR_FLOOR)
        bar = (math.log10(error) + decades) / decades * CHART_WIDTH
        out.append(f'<text x="{LABEL_WIDTH - 8}" y="{y + BAR_HEIGHT - 4}" text-anchor="end">{_e(n["fmt"])}</text>')
        out.append(f'<rect class="error-bar" data-format="{_e(n["fmt"])}" '
                   f'data-relative-error="{n["relative_error"]!r}" x="{LABEL_WIDTH}" y="{y}" '
                   f'width="{max(bar, 1):.3f}" height="{BAR_HEIGHT}" fill="#6d4c41"/>')
        out.append(f'<text x="{LABEL_WIDTH + CHART_WIDTH + 12}" y="{y + BAR_HEIGHT - 4}">'
                   f'{n["relative_error"]:.1e} relative, {n.get("max_abs_error") or 0:.1e} max abs</text>')
    axis_y = 6 + len(numerics) * ROW_HEIGHT + 4
    for decade in range(int(decades) + 1):
        x = LABEL_WIDTH + decade / decades * CHART_WIDTH
        out.append(f'<text x="{x:.1f}" y="{axis_y + 12}" text-anchor="middle" fill="#777">1e{decade - int(decades)}'
                   "</text>")
    out.append("</svg>")
    return "".join(out)


def _table(headers: list[str], rows: list[list[str]], left: int = 1) -> str:
    head = "".join(f'<th{" class=l" if i < left else ""}>{_e(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td{" class=l" if i < left else ""}>{_e(c)}</td>' for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_html(payload: dict[str, Any]) -> str:
    """The page for an `advise --probe` payload (json_payload in advise_command)."""
    rec = payload["recommendation"]
    probe = payload.get("probe") or {}
    device = probe.get("device") or {}
    timings = probe.get("timings", [])
    verdicts = probe.get("verdicts", [])
    title = f"precisionlint probe: {device.get('name', 'this machine')}"
    versions = [f"torch {device.get('torch_version', '?')}"]
    if device.get("cuda_version"):
        versions.append(f"CUDA {device['cuda_version']}")
    if device.get("compute_capability"):
        versions.append(f"compute capability {device['compute_capability']}")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{_e(title)}</h1>",
           f'<p class="sub">{_e(", ".join(versions))}; measured in {probe.get("elapsed_s", 0):.1f} s of a '
           f'{probe.get("budget_s", 0):g} s budget; reference matmuls {probe.get("size")}x{probe.get("size")}.</p>']

    # The recommendation and its decision path.
    out.append('<h2>Recommendation</h2><div class="rec" id="recommendation">')
    out.append(f'<p>precision <b data-precision="{_e(rec["precision"])}">{_e(rec["precision"])}</b> · '
               f'tf32_matmul_precision <b>{_e(rec["tf32_matmul_precision"] or "unset")}</b> · GradScaler '
               f'<b>{"yes" if rec["grad_scaler"] else "no"}</b></p>')
    out.append('<ol id="decision-path">')
    for step in rec["path"]:
        out.append(f'<li><b>{_e(step["question"])}</b> {_e(step["answer"])}<br><span class="why">'
                   f'{_e(step["reason"])}</span></li>')
    out.append("</ol>")
    if rec.get("notes"):
        out.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in rec["notes"]) + "</ul>")
    out.append("</div>")

    # Throughput.
    if timings:
        out.append("<h2>Matmul throughput per format</h2>")
        out.append(legend(timings, verdicts))
        out.append(throughput_chart(timings, verdicts))
        out.append(_table(
            ["format", "TFLOP/s", "slowest-fastest", "spread", "batches x calls", "warm-up", "% datasheet",
             "% achievable", "against", "API"],
            [[t["format"], _fmt(t["tflops"], 4), f"{_fmt(t['tflops_min'])}-{_fmt(t['tflops_max'])}",
              _pct(t["spread"]) + ("" if _reliable(t) else " (unreliable)"), f"{t['repeats']} x {t['inner']}",
              f"{t['warmup_batches']} batches{'' if t['settled'] else ', not settled'}",
              _pct(t["fraction_of_peak"], _reliable(t)), _pct(t["fraction_of_achievable"], _reliable(t)),
              (t.get("reference") or REFERENCE_MAXIMUM) if t.get("achievable_tflops") else "-", t["api"]]
             for t in timings]))
        unsteady = [t for t in timings if not _reliable(t)]
        if unsteady:
            spreads = ", ".join(f"{t['format']}: one timed batch" if len(t.get("samples_ms", ())) == 1
                                else f"{t['format']}: spread {t['spread']:.0%}" for t in unsteady)
            out.append(f'<p class="sub unreliable">Unreliable ({_e(spreads)}): the batches spread more than '
                       f"{UNRELIABLE_SPREAD:.0%}, or one batch shows no spread at all, so their ratios and "
                       f"percentages are rounded; {_e(RERUN_HINT)}.</p>")
        for v in verdicts:
            if v["status"] == "low":
                out.append(f'<p class="low verdict" data-format="{_e(v["format"])}">{_e(v["sentence"])}</p>')
    for s in probe.get("skipped", []):
        out.append(f'<p class="sub">{_e(s["fmt"])}: not measured, {_e(s["reason"])}.</p>')

    # Exactness.
    numerics = probe.get("numerics", [])
    if numerics:
        size = numerics[0]["size"]
        out.append("<h2>Error against float64</h2>")
        out.append(f'<p class="sub">A {size}x{size} matmul of random normal inputs in each format against the float64 '
                   "product of the same data: max |error| / mean |float64 product|, as in PyTorch's TF32 note.</p>")
        out.append(error_chart(numerics))
        out.append(_table(["format", "relative error", "max abs error"],
                          [[n["fmt"], f"{n['relative_error']:.2e}",
                            "-" if n.get("max_abs_error") is None else f"{n['max_abs_error']:.2e}"]
                           for n in numerics]))
    ls = probe.get("loss_scaling")
    if ls:
        out.append(f'<p>fp16 loss scaling: of {ls["samples"]:,} gradient-like values between {ls["low"]:g} and '
                   f'{ls["high"]:g}, {ls["underflow_unscaled"]:.1%} become zero in fp16, {ls["underflow_scaled"]:.1%} '
                   f'after scaling by {ls["scale"]:g}.</p>')

    # The user's shapes.
    shape_timings = probe.get("shape_timings", [])
    alignment = probe.get("alignment") if probe else payload.get("alignment")
    if shape_timings or alignment or payload.get("shapes"):
        out.append("<h2>Your shapes</h2>")
        if shape_timings:
            out.append(_table(["shape", "M x N x K", "format", "TFLOP/s", "spread"],
                              [[t["shape"], f"{t['m']}x{t['n']}x{t['k']}", t["format"], _fmt(t["tflops"], 4),
                                _pct(t["spread"])] for t in shape_timings]))
        if alignment:
            out.append("<ul class=\"alignment\">" + "".join(
                f"<li>{_e(a['shape'])}: {_e(a['dimension'])} = {a['value']} is {_e(a['consequence'])}</li>"
                for a in alignment) + "</ul>")
        elif payload.get("shapes"):
            out.append("<p>Every dimension is a multiple of 64: aligned for every tensor-core format.</p>")

    # Other GPUs and the driver's readings.
    peers = probe.get("peers", [])
    if peers:
        out.append("<h2>Other GPUs</h2><ul>" + "".join(
            f'<li class="{"low" if p["differs"] else "ok"}">{_e(p["sentence"])}</li>' for p in peers) + "</ul>")
    telemetry = probe.get("telemetry")
    if telemetry:
        out.append("<h2>What the driver reported during the run</h2>")
        out.append(_table(["SM clock (MHz)", "max SM clock", "power (W)", "power limit", "default limit",
                           "temperature (C)", "throttle reasons", "other processes"],
                          [[_fmt(telemetry["sm_clock_mhz"], 5), _fmt(telemetry["sm_clock_max_mhz"], 5),
                            _fmt(telemetry["power_draw_w"], 4), _fmt(telemetry["power_limit_w"], 4),
                            _fmt(telemetry["power_default_limit_w"], 4), _fmt(telemetry["temperature_c"], 3),
                            ", ".join(telemetry["throttle_reasons"]) or "none",
                            str(len(telemetry["other_processes"]))]], left=0))
    elif device.get("kind") == "cuda":
        out.append('<p class="sub">No clock or power readings: nvidia-smi was not found or did not answer.</p>')
    for note in probe.get("notes", []):
        out.append(f"<p>{_e(note)}</p>")

    sources = [f"Datasheet peaks: {t['source']}" for t in payload.get("targets", []) if t.get("source")]
    for reference, source in dict.fromkeys((t.get("reference") or REFERENCE_MAXIMUM, t.get("reference_source"))
                                           for t in timings if t.get("achievable_tflops")):
        if source is None:  # a run saved before the JSON named its sources: the MAMF tables
            from precisionlint.hardware.achievable import MAMF_SOURCE

            source = MAMF_SOURCE
        sources.append(f"{reference[0].upper()}{reference[1:]}: {source}")
    if sources:
        out.append('<h2>Sources</h2><ul class="sub">' + "".join(f"<li>{_e(s)}</li>" for s in sources) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
