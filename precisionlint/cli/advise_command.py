"""`precisionlint advise`: the decision tree for named GPUs (--gpu) or for this machine, measured (--probe).

Imported by cli.py at start-up, so this module imports only click: hardware, advisor, probe (and torch, through
the probe) load when the command runs.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from precisionlint.advise.config_changes import Comparison
    from precisionlint.advise.probe.results import ProbeResult
    from precisionlint.advise.probe.shapes import Shape
    from precisionlint.advise.recommendation import Recommendation
    from precisionlint.hardware.gpu import Gpu

EXIT_USAGE = 2
WIDTH = 100


def _progress() -> Any:
    """Progress lines on stderr while the probe measures, only for a person watching a terminal."""
    if not sys.stderr.isatty():
        return None
    return lambda message: click.echo(f"precisionlint: {message}", err=True)


@click.command("advise")
@click.option("--gpu", "gpu_names", multiple=True, metavar="NAME",
              help="Target GPU, e.g. A100, 'NVIDIA H100 PCIe', T4 (repeatable or comma-separated: a fleet, every "
                   "GPU must run the result well), or 'auto' for this machine's GPUs.")
@click.option("--probe", is_flag=True,
              help="Measure this machine (matmul speed and error per format) and recommend from the measurements. "
                   "Needs PyTorch: python3 -m pip install '.[probe]' from a clone.")
@click.option("--params", metavar="N",
              help="Model size in parameters: 350M, 1.5B, 7B, 125k or a number. Without it the large-model "
                   "branch is assumed.")
@click.option("--priority", type=click.Choice(["speed", "accuracy"]), default=None,
              help="Override the model-size rule: the fastest native format, or full float32.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Your current config or training script: show what to change.")
@click.option("--model", "model_name", metavar="PATH|HUB_ID", default=None,
              help="The checkpoint you train: a local folder (its config.json is read) or a Hugging Face hub id. "
                   "A checkpoint published in bf16 is not advised float16 on GPUs without bf16. Default: the "
                   "model your --config names.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--budget", type=click.FloatRange(min=0.5, max=600.0), default=None, metavar="SECONDS",
              help="With --probe: total time for the measurements (default 10).")
@click.option("--size", type=click.IntRange(min=16, max=65536), default=None, metavar="N",
              help="With --probe: matrix size of the timed matmuls (default 8192 on a GPU, 1024 on a CPU).")
@click.option("--shapes", "shapes_spec", metavar="CONFIG.json|MxNxK",
              help="Your model's matmul shapes: a Hugging Face config.json or MxNxK triples (comma-separated). "
                   "Checked for tensor-core alignment; with --probe also timed beside the square reference.")
@click.option("--device", "device_index", type=click.IntRange(min=0), default=None, metavar="N",
              help="With --probe: measure GPU N only (default: every visible GPU, the first one fully).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="With --probe: also write a self-contained HTML report (charts, errors, the decision path).")
@click.option("--write", "write_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Apply the recommendation to this TOML, YAML or JSON config in place (comments and layout kept).")
@click.option("--diff", is_flag=True, help="With --write: print the change as a unified diff and write nothing.")
@click.option("--list-gpus", is_flag=True, help="List the GPUs precisionlint knows, with their figures, and exit.")
def advise(
    gpu_names: tuple[str, ...],
    probe: bool,
    params: str | None,
    priority: str | None,
    config_path: str | None,
    model_name: str | None,
    output_format: str,
    budget: float | None,
    size: int | None,
    shapes_spec: str | None,
    device_index: int | None,
    report_path: str | None,
    write_path: str | None,
    diff: bool,
    list_gpus: bool,
) -> None:
    """Recommend a training precision and TF32 setting, with the reasons and ready-to-paste snippets.

    The tree: native bf16 (compute capability 8.0+)? -> model size (--params) -> priority (--priority) ->
    is each faster format really faster (datasheet figures, or measured with --probe)?
    """
    began = time.perf_counter()  # the probe's budget counts from here: importing torch is part of it
    from precisionlint.advise import advisor, config_changes, local_gpus
    from precisionlint.hardware.detect import device_from_description
    from precisionlint.hardware.gpu import UnknownGpuError
    from precisionlint.hardware.targets import resolve_targets

    if list_gpus:
        _list_gpus(output_format)
        return
    if probe and gpu_names:
        raise click.UsageError("use either --gpu (named GPUs) or --probe (measure this machine), not both")
    custom_gpus: dict[str, Any] = {}
    if not probe:
        gpu_names, custom_gpus = _gpus_from_configuration(gpu_names, write_path or config_path)
    if not probe and not gpu_names:
        raise click.UsageError("name the target GPU with --gpu NAME (or --gpu auto), set gpus in the "
                               "configuration, or measure this machine with --probe; --list-gpus shows the known "
                               "names")
    if not probe and (budget is not None or size is not None):
        raise click.UsageError("--budget and --size only apply with --probe")
    if not probe and (device_index is not None or report_path is not None):
        raise click.UsageError("--device and --report only apply with --probe")
    shapes = _parse_shapes(shapes_spec) if shapes_spec is not None else None
    if diff and not write_path:
        raise click.UsageError("--diff shows what --write FILE would change; name the file with --write")
    if write_path and config_path and write_path != config_path:
        raise click.UsageError("--config and --write name different files; --write FILE also compares FILE")
    if write_path:
        from precisionlint.sources import format_of

        if format_of(write_path) not in ("toml", "yaml", "json"):
            raise click.BadParameter(f"{write_path}: --write takes a TOML, YAML or JSON config",
                                     param_hint="--write")
        config_path = write_path
    param_count = None
    if params is not None:
        try:
            param_count = advisor.parse_params(params)
        except ValueError:
            raise click.BadParameter(f"{params!r} is not a parameter count (try 350M, 1.5B, 7B)",
                                     param_hint="--params") from None

    document = _load_config(config_path, "--write" if write_path else "--config") if config_path else None

    measured: ProbeResult | None = None
    targets: tuple[Gpu, ...] = ()
    if probe:
        from precisionlint.advise.probe import device as probe_device
        from precisionlint.advise.probe import measure as probe_measure

        try:
            measured = probe_measure.run_probe(
                budget_s=budget if budget is not None else probe_measure.DEFAULT_BUDGET_S,
                size=size,
                device_index=device_index,
                progress=_progress(),
                shapes=shapes,
                began=began,
            )
        except probe_device.ProbeUnavailable as exc:
            click.echo(f"precisionlint: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except ValueError as exc:  # --device N names no device
            raise click.UsageError(str(exc)) from None
        except RuntimeError as exc:  # a CUDA error, out of memory: the device, not precisionlint, failed
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            click.echo(f"precisionlint: error: the probe failed on this device: {first}", err=True)
            sys.exit(EXIT_USAGE)
        if measured.device.is_gpu:
            targets = (device_from_description(measured.device),)
    else:
        import warnings

        try:
            with warnings.catch_warnings():  # `auto` may ask PyTorch, which warns without a driver
                warnings.simplefilter("ignore")
                targets = resolve_targets(gpu_names, custom=custom_gpus, local=local_gpus.local_gpus)
        except UnknownGpuError as exc:
            raise click.UsageError(str(exc)) from None
        if not targets:
            raise click.UsageError("--gpu auto found no GPU on this machine (no nvidia-smi and no CUDA device "
                                   "visible to PyTorch); name one with --gpu NAME or measure the CPU with --probe")

    from precisionlint.advise.checkpoint import bf16_checkpoint

    rec = advisor.recommend(targets, params=param_count, priority=priority, probe=measured,
                            current_fp8=document is not None and config_changes.uses_fp8(document),
                            bf16_checkpoint=bf16_checkpoint(model_name, config_path, document, shapes_spec))
    if write_path:
        _write(write_path, document, rec, diff, targets)
        return
    comparison = config_changes.compare_config(document, rec) if document is not None else None
    payload = json_payload(rec, targets, measured, comparison, shapes)
    if report_path is not None:
        _write_report(report_path, payload)
    if output_format == "json":
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(render_text(rec, targets, measured, comparison, shapes), nl=False)


def _parse_shapes(spec: str) -> list[Shape]:
    from precisionlint.advise.probe.shapes import ShapeError, parse_shapes

    try:
        return parse_shapes(spec)
    except ShapeError as exc:
        raise click.BadParameter(str(exc).removeprefix("--shapes: "), param_hint="--shapes") from None


def _write_report(path: str, payload: dict[str, Any]) -> None:
    from precisionlint.advise.probe.report import render_html
    from precisionlint.fix.write import WriteRefused, write_report

    try:
        write_report(path, render_html(payload))
    except WriteRefused as exc:
        click.echo(f"precisionlint: error: {path}: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        click.echo(f"precisionlint: error: {path}: cannot write: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    # On stderr, so that stdout stays the report the user asked for (JSON for --output-format json).
    click.echo(f"precisionlint: wrote {path}", err=True)


def _gpus_from_configuration(gpu_names: tuple[str, ...], near: str | None) -> tuple[tuple[str, ...], dict[str, Any]]:
    """--gpu, else the `gpus` of the configuration nearest to the file (or the current directory); and the
    configuration's custom-gpus, so that its own cards are known by name either way."""
    from pathlib import Path

    from precisionlint.run.config import ConfigError, load_config

    try:
        config = load_config(None, Path(near).resolve().parent if near else None)
    except ConfigError as exc:
        click.echo(f"precisionlint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    return (tuple(gpu_names) or tuple(config.gpus)), config.custom_gpus


def _hf_tf32_accepted(gpu: Gpu) -> bool:
    """Whether Transformers accepts tf32=True on this card (an NVIDIA GPU of compute capability 8.0+)."""
    return gpu.vendor == "nvidia" and gpu.compute_capability is not None and gpu.compute_capability >= (8, 0)


def _introduced_findings(path: str, old: str, new: str, targets: tuple[Gpu, ...]) -> list[Any]:
    """Findings that `check` (default rules, the same GPUs) reports on the written text and not on the old one:
    what advise writes must pass its own check."""
    from precisionlint.cli.rule_selection import default_rules
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.options import EngineOptions
    from precisionlint.sources import format_of

    fmt = format_of(path)
    if fmt is None:
        return []
    options = EngineOptions(rules=default_rules(), gpus=targets, prefilter=False)

    def keyed(text: str) -> set[tuple[str, str]]:
        return {(f.code, f.message) for f in check_bytes(path, text.encode("utf-8"), fmt, options).findings}

    before = keyed(old)
    return [f for f in check_bytes(path, new.encode("utf-8"), fmt, options).findings
            if (f.code, f.message) not in before]


def _write(path: str, document: Any, rec: Recommendation, diff: bool, targets: tuple[Gpu, ...] = ()) -> None:
    """Apply the recommendation to `path` through the fixer's verified, layout-keeping edits."""
    from precisionlint.advise import config_changes
    from precisionlint.fix.apply import unified_diff
    from precisionlint.fix.setting_changes import plan_setting_changes

    changes = config_changes.changes_for_file(document, rec)
    if "tf32" not in changes and any(not _hf_tf32_accepted(gpu) for gpu in targets) and any(
        s.value is True and s.framework == "hf" for s in document.settings_named("tf32")
    ):
        # Transformers raises ValueError for tf32=True on a card without NVIDIA TF32 (before Ampere, or AMD):
        # the user's setting cannot be kept for these targets.
        changes["tf32"] = None
    data = _read_config(path, "--write")
    try:
        old, new = plan_setting_changes(path, changes, data)
    except ValueError as exc:
        click.echo(f"precisionlint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    introduced = _introduced_findings(path, old, new, targets) if old != new else []
    if introduced:
        # A recommendation that its own check would reject is a bug in the recommendation: refuse to write it.
        first = introduced[0]
        click.echo(f"precisionlint: error: {path}: not written: the change would introduce "
                   f"{first.code} {first.name} at line {first.span.line}: {first.message}", err=True)
        sys.exit(EXIT_USAGE)
    if old == new:
        click.echo(f"{path}: already follows the recommendation ({rec.precision}); nothing to change")
        return
    if diff:
        click.echo(unified_diff(path, old, new), nl=False)
        return
    from precisionlint.fix.write import FileChanged, WriteRefused, rewrite
    from precisionlint.sources import format_of

    try:
        # The writer of check --fix: BOM and line endings kept, read-only files and hard links refused, and
        # a file another program changed since it was read (an editor's save) left as that program saved it.
        rewrite(path, data, new, format_of(path))
    except FileChanged:
        click.echo(f"precisionlint: error: {path}: changed by another program since it was read; left as it "
                   "is (run again to change the new content)", err=True)
        sys.exit(EXIT_USAGE)
    except WriteRefused as exc:
        click.echo(f"precisionlint: error: {path}: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        click.echo(f"precisionlint: error: {path}: cannot write: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    described = ", ".join(
        f"{name} removed" if value is None else f"{name}={value!r}" for name, value in changes.items()
    )
    click.echo(f"{path}: wrote {described}")


def _read_config(path: str, option: str) -> bytes:
    """The bytes of the config named by --config or --write: a regular file only (a FIFO would block the
    command forever), within the per-file size limit of check."""
    from precisionlint.core.bounded_read import read_bytes
    from precisionlint.sources import Limits

    try:
        return read_bytes(path, Limits().max_file_size)
    except OSError as exc:
        raise click.BadParameter(f"{path}: {exc.strerror or exc}", param_hint=option) from None
    except ValueError as exc:  # a NUL in the name
        raise click.BadParameter(f"{path}: {exc}", param_hint=option) from None


def _load_config(path: str, option: str = "--config") -> Any:
    from precisionlint.frameworks.documents import load_document
    from precisionlint.sources import LimitError, SourceError, format_of

    fmt = format_of(path)
    if fmt is None:
        raise click.BadParameter(f"{path}: not a TOML, YAML, JSON or Python file", param_hint=option)
    data = _read_config(path, option)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        return load_document(path, text, fmt)
    except UnicodeDecodeError:
        raise click.BadParameter(f"{path}: not valid UTF-8", param_hint=option) from None
    except SourceError as exc:
        raise click.BadParameter(f"{path}:{exc.line}:{exc.column}: {exc.message}", param_hint=option) from None
    except (LimitError, RecursionError) as exc:
        raise click.BadParameter(f"{path}: {exc or 'nesting too deep'}", param_hint=option) from None


# ---------------------------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------------------------

def gpu_json(gpu: Gpu) -> dict[str, Any]:
    return {
        "name": gpu.name,
        "vendor": gpu.vendor,
        "architecture": gpu.architecture,
        "compute_capability": (f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}"
                               if gpu.compute_capability else None),
        "gfx_arch": gpu.gfx_arch,
        "bf16": gpu.bf16,
        "tf32": gpu.tf32,
        "fp8": gpu.fp8,
        "peak_tflops": dict(gpu.peak_tflops),
        "source": gpu.source or None,
        "in_table": gpu.in_table,
    }


def json_payload(rec: Recommendation, targets: tuple[Gpu, ...], measured: ProbeResult | None,
                 comparison: Comparison | None, shapes: list[Shape] | None = None) -> dict[str, Any]:
    """Everything `advise` knows, as JSON: the text report, the HTML report and --output-format json all show this."""
    from precisionlint.advise.recommendation import recommendation_settings
    from precisionlint.advise.snippets import snippets

    probe_json = None
    if measured is not None:
        from precisionlint.advise.probe.judge import verdicts

        probe_json = measured.to_json()
        probe_json["verdicts"] = [v.to_json() for v in verdicts(measured)]
    alignment = None
    if shapes is not None:
        from precisionlint.advise.probe.shapes import alignment_issues

        alignment = [a.to_json() for a in alignment_issues(shapes)]
    return {
        "recommendation": rec.to_json(),
        "settings": recommendation_settings(rec),
        "targets": [gpu_json(g) for g in targets],
        "snippets": snippets(rec),
        "probe": probe_json,
        "shapes": ([{"name": s.name, "m": s.m, "n": s.n, "k": s.k} for s in shapes] if shapes is not None
                   else None),
        "alignment": alignment,
        "config": ({"path": comparison.path, "needs_changes": comparison.needs_changes,
                    "changes": [c.to_json() for c in comparison.changes]} if comparison is not None else None),
    }


def _wrap(text: str, indent: str, first: str | None = None) -> str:
    """`text` filled to WIDTH; `first` replaces the indent of the first line (a number or a bullet)."""
    return textwrap.fill(text, WIDTH, initial_indent=first if first is not None else indent,
                         subsequent_indent=indent, break_long_words=False, break_on_hyphens=False) + "\n"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "unset"
    return repr(value)


def render_text(rec: Recommendation, targets: tuple[Gpu, ...], measured: ProbeResult | None,
                comparison: Comparison | None, shapes: list[Shape] | None = None) -> str:
    from precisionlint.advise.snippets import SNIPPET_TITLES, snippets

    out: list[str] = []
    if rec.device == "cpu":
        subject = f"CPU ({measured.device.name})" if measured is not None else "CPU"
    else:
        subject = ", ".join(g.describe() for g in targets)
    out.append(f"Recommendation for {subject}\n\n")
    out.append(f"  precision              {rec.precision}\n")
    unset = ("unset (autocast runs the matmuls in 16 bits)" if rec.tf32_available
             else "unset (no TF32 on this hardware)")
    out.append(f"  tf32_matmul_precision  {rec.tf32_matmul_precision or unset}\n")
    out.append(f"  GradScaler             {'yes (fp16 loss scaling)' if rec.grad_scaler else 'no'}\n")
    if rec.params_assumed:
        out.append("  (--params not given: the large-model branch was assumed)\n")

    out.append("\nDecision path\n")
    for number, step in enumerate(rec.path, 1):
        out.append(_wrap(f"{step.question} {step.answer}", "     ", f"  {number}. "))
        out.append(_wrap(step.reason, "     "))
    if rec.notes:
        out.append("\nGood to know\n")
        for note in rec.notes:
            out.append(_wrap(note, "   ", " - "))
    if measured is not None:
        out.append(f"\nMeasured ({measured.elapsed_s:.1f} s, torch {measured.device.torch_version}"
                   f"{', CUDA ' + measured.device.cuda_version if measured.device.cuda_version else ''})\n")
        for sentence in rec.evidence:
            out.append(_wrap(sentence, "   ", " - "))
    if shapes is not None and measured is None:
        from precisionlint.advise.probe.shapes import alignment_issues

        out.append("\nYour shapes (MxNxK)\n")
        for shape in shapes:
            out.append(f" - {shape.name}: {shape.text}\n")
        issues = alignment_issues(shapes)
        for issue in issues:
            out.append(_wrap(f"{issue.shape}: {issue.dimension} = {issue.value} is {issue.consequence}.", "   ",
                             " - "))
        if not issues:
            out.append("   Every dimension is a multiple of 64: aligned for every tensor-core format.\n")
    if comparison is not None:
        out.append(f"\nYour config: {comparison.path}\n")
        for change in comparison.changes:
            where = f"{comparison.path}:{change.line}:{change.column}: " if change.line else ""
            if change.action == "change":
                line = f"change {change.key} = {_show(change.current)} -> {_show(change.recommended)}"
            elif change.action == "add":
                line = f"add {change.key} = {_show(change.recommended)}"
            elif change.action == "remove":
                line = f"remove {change.key} = {_show(change.current)}"
            elif change.action == "unknown":
                line = f"check {change.key} (recommended {_show(change.recommended)})"
            else:
                line = f"keep {change.key} = {_show(change.current)}"
            out.append(f" - {where}{line}: {change.reason}\n")  # one line per change, like lint output: greppable
        if not comparison.needs_changes:
            out.append("   Nothing to change.\n")
    out.append("\nSnippets\n")
    for key, text in snippets(rec).items():
        out.append(f"\n  {SNIPPET_TITLES[key]}\n")
        out.append(textwrap.indent(text, "    "))
    return "".join(out)


def _list_gpus(output_format: str) -> None:
    from precisionlint.hardware.gpu import FORMATS
    from precisionlint.hardware.table import GPUS

    if output_format == "json":
        click.echo(json.dumps([gpu_json(g) for g in GPUS], indent=2))
        return
    header = f"{'GPU':<12} {'arch':<13} {'cc/ISA':<7} {'bf16':<5} {'tf32':<5} {'fp8':<5} " + " ".join(
        f"{f:>7}" for f in FORMATS)
    click.echo(header + "   (dense peak TFLOP/s)")
    for g in GPUS:
        flags = " ".join(f"{'yes' if v else 'no':<5}" for v in (g.bf16, g.tf32, g.fp8))
        peaks = " ".join(f"{g.peak_tflops[f]:>7g}" if f in g.peak_tflops else f"{'-':>7}" for f in FORMATS)
        click.echo(f"{g.name:<12} {g.architecture:<13} {g.cc_text:<7} {flags} {peaks}")
