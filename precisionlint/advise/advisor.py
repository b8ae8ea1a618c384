"""The precision decision tree: target hardware (+ optional measurements) -> a Recommendation (plain data).

The tree is seed 004's quick decision guide, corrected where FACTS.md shows the seed wrong:

* TF32 is not PyTorch's default for float32 matmuls (torch.backends.cuda.matmul.allow_tf32 is False since 1.12;
  cuDNN convolutions do default to TF32). Leaving the setting unset means "highest", full IEEE float32.
* "medium" is the same as "high" on CUDA (cuBLAS has no bf16 path for float32 matmuls): we write "high".
* The TF32 setting is not ignored under mixed precision: matmuls outside autocast (a metric or loss computed after
  the autocast block, evaluation without autocast) still run in float32 and follow it.
* On GeForce Ampere/Ada cards (and the A10G) the datasheet TF32 rate equals the float32 rate, so TF32 costs
  precision for no speed there; the tree compares formats by their figures instead of by architecture name.

Rendering (text, JSON) lives in advise_command.py; this module only decides. The Recommendation it returns is
in recommendation.py, its spelling per framework in snippets.py, its comparison with the user's file in
config_changes.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from precisionlint.advise.recommendation import FP8_PRECISION, Recommendation, Step
from precisionlint.hardware.detect import device_from_description
from precisionlint.hardware.gpu import Gpu, fleet_names

if TYPE_CHECKING:
    from precisionlint.advise.probe.results import ProbeResult

LARGE_MODEL_PARAMS = 25e6  # ResNet-50 (25.6M): seed 004's "large model" line
FP8_HINT_PARAMS = 1e9  # FP8 is worth its tuning only for large transformer training
SPEEDUP_WORTH = 1.2  # a format must be this much faster (datasheet or measured) to be chosen for speed

PRIORITIES = ("speed", "accuracy")


# ---------------------------------------------------------------------------------------------------------------
# Speed ratios: measured when the probe ran, else from the datasheet table
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class _Speeds:
    targets: tuple[Gpu, ...]
    probe: ProbeResult | None = None

    def tflops(self, fmt: str) -> float | None:
        if self.probe is not None:
            timing = self.probe.timing(fmt)
            return timing.tflops if timing else None
        return None

    def ratio(self, fmt: str, over: str) -> tuple[float | None, str]:
        """(speed of fmt / speed of over, "measured" | "datasheet"); for a fleet, the slowest GPU's ratio."""
        if self.probe is not None:
            a, b = self.tflops(fmt), self.tflops(over)
            if a and b:
                return a / b, "measured"
        ratios = [gpu.speedup(fmt, over) for gpu in self.targets]
        if ratios and all(r is not None for r in ratios):
            return min(r for r in ratios if r is not None), "datasheet"
        return None, "unknown"

    def ratio_text(self, fmt: str, over: str, ratio: float, source: str) -> tuple[str, str]:
        """(the ratio, where it comes from) as the decision path writes them: '2.6x', 'measured figures'; a
        measured ratio only to the digits its batches support, with the caveat (probe/figures.py)."""
        fast = self.probe.timing(fmt) if self.probe is not None and source == "measured" else None
        slow = self.probe.timing(over) if self.probe is not None and source == "measured" else None
        if fast is None or slow is None:
            return _x(ratio), f"{source} figures"
        from precisionlint.advise.probe.figures import ratio_text

        text, caveat = ratio_text(fast, slow)
        return text, f"{source} figures; {caveat}" if caveat else f"{source} figures"


def _x(ratio: float | None) -> str:
    return f"{ratio:.2g}x" if ratio is not None and ratio < 10 else f"{ratio:.0f}x" if ratio else "?"


def _params_text(params: float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if params >= scale:
            value = params / scale
            return f"{value:.3g}{unit}"
    return f"{params:.0f}"


def parse_params(text: str) -> float:
    """'350M', '7B', '1.5b', '125k', '7e9', '7000000' -> parameter count. Raises ValueError."""
    raw = text.strip().replace("_", "").replace(",", "")
    if not raw:
        raise ValueError("empty parameter count")
    scale = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}.get(raw[-1].lower())
    number = raw[:-1].strip() if scale else raw
    value = float(number) * (scale or 1.0)
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(f"not a positive parameter count: {text!r}")
    return value


# ---------------------------------------------------------------------------------------------------------------
# The tree
# ---------------------------------------------------------------------------------------------------------------

def recommend(
    targets: Sequence[Gpu] = (),
    *,
    params: float | None = None,
    priority: str | None = None,
    probe: ProbeResult | None = None,
    current_fp8: bool = False,
    bf16_checkpoint: str | None = None,
) -> Recommendation:
    """Walk the tree for `targets` (every GPU of a fleet must run the result well), or for the device the
    probe measured (then its timings decide between formats that the datasheet says are faster).
    `current_fp8`: the user's configuration already trains in FP8; it is kept where every target runs FP8
    and accuracy is not the priority (the tree never proposes FP8 by itself: it needs Transformer Engine or
    torchao and scaling recipes, which only the user can say they have). `bf16_checkpoint`: the model trained
    is a checkpoint published in bfloat16, and what says so; on GPUs without bf16 float16 is then not proposed
    unless speed is the priority, and never without the warning."""
    if priority is not None and priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {PRIORITIES}, not {priority!r}")
    if probe is not None:
        if not probe.device.is_gpu:
            return _recommend_cpu(probe, params, priority)
        targets = (device_from_description(probe.device),)
    targets = tuple(targets)
    if not targets:
        raise ValueError("no target GPU: name one (--gpu) or measure this machine (--probe)")
    return _recommend_gpu(targets, params, priority, probe, current_fp8, bf16_checkpoint)


def _size_step(params: float | None) -> tuple[Step, bool]:
    if params is None:
        return Step("Is the model large (ResNet-50 size, about 25M parameters, or more)?",
                    "assumed yes (--params not given)",
                    "Mixed precision is mostly used for models of that size and up; pass --params to choose "
                    "the small-model branch explicitly."), True
    large = params >= LARGE_MODEL_PARAMS
    why = ("Large models are bound by matmul throughput and activation memory, where 16-bit formats pay off."
           if large else
           "Small models rarely saturate the tensor cores (kernel launches and memory traffic dominate), so "
           "16-bit formats buy little speed while their rounding costs accuracy.")
    return Step("Is the model large (ResNet-50 size, about 25M parameters, or more)?",
                f"{'yes' if large else 'no'} ({_params_text(params)} parameters)", why), large


def _priority_step(priority: str | None) -> Step:
    if priority == "accuracy":
        return Step("Priority?", "accuracy", "Full IEEE float32 everywhere: no 16-bit rounding, no TF32 rounding "
                                             "of matmul inputs to 10 mantissa bits.")
    if priority == "speed":
        return Step("Priority?", "speed", "Take the fastest format the hardware runs natively, whatever the "
                                          "model size.")
    return Step("Priority?", "balanced (default)", "Follow the model size: 16-bit mixed precision for large "
                                                   "models, float32 for small ones (--priority changes this).")


_BF16_QUESTION = "Native bf16 tensor-core math (NVIDIA compute capability 8.0+, AMD CDNA)?"


def _recommend_gpu(targets: tuple[Gpu, ...], params: float | None, priority: str | None,
                   probe: ProbeResult | None, current_fp8: bool = False,
                   bf16_checkpoint: str | None = None) -> Recommendation:
    names = fleet_names(targets)
    speeds = _Speeds(targets, probe)
    bf16 = all(g.bf16 for g in targets)
    tf32 = all(g.tf32 for g in targets)
    fp8 = all(g.fp8 for g in targets)
    fast_fp16 = all(g.fast_fp16 for g in targets)
    path: list[Step] = []
    notes: list[str] = []

    if len(targets) > 1:
        path.append(Step("Which GPUs?", f"a fleet: {names}",
                         "A config that runs on every GPU of the fleet must suit the least capable one, so the "
                         "answers below are the capabilities all of them share."))
    described = ", ".join(g.describe() for g in targets)
    if bf16:
        path.append(Step(_BF16_QUESTION, f"yes: {described}",
                         "bf16 matmuls run on tensor (matrix) cores, and bf16 keeps float32's exponent range, so "
                         "no loss scaling is needed."))
    else:
        lacking = fleet_names(g for g in targets if not g.bf16)
        having = [g for g in targets if g.bf16]
        answer = ", ".join(g.describe() for g in targets if not g.bf16)
        if having:  # a fleet: the "no" is the cards without bf16; those with it are named as such
            answer += f" (not {fleet_names(having)}, which {'has' if len(having) == 1 else 'have'} it)"
        path.append(Step(_BF16_QUESTION, f"no: {answer}",
                         f"{lacking} has no bf16 tensor cores. PyTorch still accepts bf16 there "
                         "(torch.cuda.is_bf16_supported() counts emulation), but it runs without the tensor-core "
                         "speed-up"
                         + ("; fp16 with loss scaling is the 16-bit format to use." if fast_fp16 else ".")))
    size_step, large = _size_step(params)
    path.append(size_step)
    path.append(_priority_step(priority))

    # The 32-bit option: float32 matmuls with or without TF32.
    tf32_gain, tf32_src = speeds.ratio("tf32", "fp32")
    tf32_worth = tf32 and (tf32_gain is None or tf32_gain >= SPEEDUP_WORTH)
    if tf32:
        if tf32_gain is None:
            tf32_reason = ("No figures for this card: TF32 tensor cores usually run float32 matmuls several "
                           "times faster, so it is assumed to pay off.")
        elif tf32_worth:
            shown, origin = speeds.ratio_text("tf32", "fp32", tf32_gain, tf32_src)
            tf32_reason = f"TF32 matmuls run at {shown} the IEEE float32 rate here ({origin})."
        else:
            why = (" (GeForce-class tensor cores run TF32 at the float32 rate)" if tf32_src == "datasheet"
                   else "")
            shown, origin = speeds.ratio_text("tf32", "fp32", tf32_gain, tf32_src)
            tf32_reason = (f"TF32 runs at only {shown} the float32 rate here ({origin}){why}, so it would round "
                           "matmul inputs to 10 mantissa bits for no speed.")
        if priority != "accuracy":
            path.append(Step("Does TF32 speed up float32 matmuls on this hardware?",
                             "yes" if tf32_worth else "no", tf32_reason))
    base32 = "tf32" if tf32_worth else "fp32"

    half = "bf16" if bf16 else ("fp16" if fast_fp16 else None)
    half_worth = False
    if half is not None:
        gain, src = speeds.ratio(half, base32)
        half_worth = gain is None or gain >= SPEEDUP_WORTH
        label = {"tf32": "TF32", "fp32": "float32"}[base32]
        if gain is None:
            reason = f"No figures to compare; {half} tensor-core matmuls are normally several times faster."
        elif half_worth:
            shown, origin = speeds.ratio_text(half, base32, gain, src)
            reason = f"{half} matmuls run at {shown} the {label} rate here ({origin})."
        else:
            shown, origin = speeds.ratio_text(half, base32, gain, src)
            reason = (f"{half} matmuls run at only {shown} the {label} rate here ({origin}), so 16-bit "
                      "precision would cost accuracy without buying speed.")
            if src == "measured":
                reason += (" The datasheet says otherwise: check the clocks and power limit (nvidia-smi -q -d "
                           "CLOCK,POWER), other jobs on the GPU, and that the probe's matrix size is large enough.")
        if priority != "accuracy":
            path.append(Step(f"Is {half} clearly faster than {label} matmuls?", "yes" if half_worth else "no",
                             reason))
    elif priority != "accuracy":
        path.append(Step("Fast 16-bit math (tensor cores or packed half2)?", "no",
                         f"{fleet_names(g for g in targets if not g.fast_fp16)} runs fp16 no faster than float32 "
                         "(GP10x consumer Pascal runs it at 1/64 rate): mixed precision would only add risk."))

    use_half = half is not None and half_worth and (
        priority == "speed" or (priority is None and large))
    precision = {"bf16": "bf16-mixed", "fp16": "16-mixed"}[half] if use_half and half else "32-true"
    if precision == "16-mixed" and bf16_checkpoint is not None:
        precision = _bf16_checkpoint_step(path, notes, bf16_checkpoint, priority)
    if current_fp8:
        path.append(_fp8_step(targets, fp8, bf16, priority))
        if fp8 and bf16 and priority != "accuracy":
            precision = FP8_PRECISION

    # Under mixed precision Lightning, Transformers and Accelerate run every training and evaluation matmul
    # under autocast, so the float32 matmul precision only reaches matmuls outside it: leave it unset (check's
    # PL104 reports it beside mixed precision in [trainer_config]).
    tf32_setting: str | None = None
    if tf32 and precision == "32-true":
        tf32_setting = "high" if tf32_worth and priority != "accuracy" else "highest"

    # Notes: true statements that the user needs next to this choice.
    if precision == "16-mixed":
        notes.append("16-mixed needs loss scaling: Lightning, Transformers and Accelerate create a GradScaler for "
                     "you; in plain PyTorch use torch.amp.GradScaler('cuda') and call scaler.unscale_(optimizer) "
                     "before clipping gradients.")
    if precision == FP8_PRECISION:
        notes.append("FP8 training as configured: Transformer Engine layers (or torchao's float8 training) run "
                     "their matmuls in FP8 with per-tensor scaling, everything else in bf16, with no GradScaler. "
                     "It needs Transformer Engine (or torchao / MS-AMP) installed; if it is missing, Accelerate "
                     "falls back with a warning and Lightning refuses to start.")
    if precision == "bf16-mixed":
        notes.append("No GradScaler with bf16: its exponent range equals float32's, so gradients do not "
                     "underflow the way fp16 ones do (a scaler would be pure overhead).")
    if tf32_setting == "high":
        notes.append("'high' enables TF32 for float32 matmuls; PyTorch's default is 'highest' (TF32 off for "
                     "matmuls since 1.12, while cuDNN convolutions use TF32 by default). 'medium' is the same "
                     "as 'high' on CUDA.")
    elif tf32_setting == "highest":
        notes.append("'highest' keeps float32 matmuls in full IEEE precision (PyTorch's default). Lightning "
                     "reports at start-up that the GPU has tensor cores whenever the precision is 'highest'; "
                     "that message is informational.")
    elif tf32 and precision != "32-true":
        notes.append(f"tf32_matmul_precision is left unset: under {precision} autocast runs the matmuls of the "
                     f"training and evaluation steps in {'bf16' if precision == 'bf16-mixed' else 'fp16'}. The "
                     "setting is not ignored, though: float32 matmuls outside autocast (code that disables it or "
                     "runs after it) follow it, so set 'high' if you have such matmuls ('medium' is the same as "
                     "'high' on CUDA).")
    elif any(g.tf32 for g in targets):
        notes.append("Some GPUs of the fleet have TF32 and some do not: the setting is left unset. "
                     "torch.set_float32_matmul_precision('high') is harmless on GPUs without TF32, but "
                     "Transformers' tf32=True raises ValueError there.")
    else:
        notes.append(f"{names} has no TF32: leave tf32_matmul_precision unset (Transformers' tf32=True raises "
                     "ValueError on these GPUs).")
    fp8_measured = _fp8_measurement(probe) if fp8 and precision != "32-true" else None
    if fp8_measured:
        notes.append(fp8_measured)
    elif fp8 and precision not in ("32-true", FP8_PRECISION) and (params or 0) >= FP8_HINT_PARAMS:
        notes.append("These GPUs have FP8 tensor cores (compute capability 8.9+): 'transformer-engine' "
                     "(Lightning) or mixed_precision 'fp8' (Accelerate) can be faster still for large transformer "
                     "models. It needs NVIDIA Transformer Engine (or torchao / MS-AMP) and per-tensor scaling "
                     "recipes: get bf16-mixed working first.")
    if precision == "32-true" and params is not None and params >= FP8_HINT_PARAMS:
        notes.append(f"Memory: float32 weights, gradients and Adam moments take 16 bytes per parameter "
                     f"(~{params * 16 / 1e9:.0f} GB for {_params_text(params)}) before activations. bf16-mixed "
                     "keeps float32 master weights too, so it saves activation memory and time, not this part.")

    return Recommendation(
        device="gpu",
        targets=tuple(dict.fromkeys(g.name for g in targets)),
        precision=precision,
        tf32_matmul_precision=tf32_setting,
        priority=priority,
        params=params,
        params_assumed=params is None,
        path=tuple(path),
        notes=tuple(notes),
        evidence=evidence(probe) if probe is not None else (),
        measured=probe is not None,
        tf32_available=tf32,
    )


_BF16_CHECKPOINT_RISK = (
    "A model trained in bf16 never had to keep its activations below float16's largest value, 65504 (bf16 has "
    "float32's exponent range): its residual stream, attention logits or gradients exceed it somewhere, and in "
    "float16 they become inf, then NaN, which loss scaling cannot prevent (Qwen's maintainers call fp16 NaN with "
    "their bf16 checkpoints expected, QwenLM/Qwen3#868; Unsloth runs Gemma 3 in float32 for fp16 requests, "
    "unslothai/unsloth#4014).")


def _bf16_checkpoint_step(path: list[Step], notes: list[str], checkpoint: str, priority: str | None) -> str:
    """The answer for a bfloat16 checkpoint on GPUs whose 16-bit format is float16 (check's
    fp16-on-bf16-checkpoint): float32, or under --priority speed float16 with the risk said."""
    if priority == "speed":
        path.append(Step("Was the checkpoint trained in bf16?", f"yes: {checkpoint}",
                         _BF16_CHECKPOINT_RISK + " Speed is the priority, so 16-mixed stays, at that risk."))
        notes.append("16-mixed on a bf16 checkpoint: watch the first hundreds of steps for inf/NaN losses and "
                     "gradient norms; if they appear, train in float32 (32-true), or move to a GPU with native "
                     "bf16 (compute capability 8.0+) and use bf16-mixed.")
        return "16-mixed"
    path.append(Step("Was the checkpoint trained in bf16?", f"yes: {checkpoint}",
                     _BF16_CHECKPOINT_RISK + " Without native bf16 here, float32 is the safe choice."))
    notes.append("float32 for a bf16 checkpoint on GPUs without bf16: 16-mixed would be faster and may work for a "
                 "given model and sequence length, but only a run shows it (watch for inf/NaN losses; "
                 "--priority speed recommends it with that warning). A GPU with native bf16 (compute capability "
                 "8.0+) trains it in bf16-mixed.")
    return "32-true"


def _fp8_step(targets: tuple[Gpu, ...], fp8: bool, bf16: bool, priority: str | None) -> Step:
    question = "The configuration trains in FP8: does every target run it?"
    if not fp8 or not bf16:
        lacking = fleet_names(g for g in targets if not (g.fp8 and g.bf16))
        return Step(question, f"no: {lacking}",
                    f"{lacking} has no FP8 tensor cores (compute capability 8.9 or newer, or AMD CDNA 3); the "
                    "16-bit answer of the steps above replaces it.")
    if priority == "accuracy":
        return Step(question, "yes, but accuracy comes first",
                    "FP8 keeps 3 (e4m3) or 2 (e5m2) mantissa bits; with --priority accuracy the answer of the steps "
                    "above replaces it.")
    return Step(question, "yes: kept",
                "Every target has FP8 tensor cores (compute capability 8.9 or newer), where FP8 matmuls run at "
                "about twice the bf16 rate; the configuration's choice stands.")


def _fp8_measurement(probe: ProbeResult | None) -> str | None:
    """The FP8 note for a GPU the probe measured: what fp8 matmuls reached beside bf16, and what it takes to use."""
    if probe is None:
        return None
    fp8 = probe.timing("fp8")
    if fp8 is None:
        return None
    fast = probe.timing("fp8-fast")
    half = probe.timing("bf16") or probe.timing("fp16")
    measured = f"fp8 (e4m3, per-tensor scales) matmuls measured {fp8.tflops:.0f} TFLOP/s"
    if fast is not None:
        measured += f", {fast.tflops:.0f} with fast accumulation"
    if half is not None:
        from precisionlint.advise.probe.figures import ratio_text

        shown, caveat = ratio_text(fp8, half)
        measured += f", {shown} the {half.fmt} rate" + (f" ({caveat})" if caveat else "")
    error = probe.numeric("fp8")
    if error is not None:
        measured += f", at a relative error of {error.relative_error:.1e}"
    return (f"FP8 is available on this GPU: {measured}. Training in FP8 needs NVIDIA Transformer Engine "
            "('transformer-engine' in Lightning, mixed_precision 'fp8' in Accelerate) or torchao, with scaling "
            "recipes; the gain in a whole training step is smaller than in a bare matmul. Get bf16-mixed "
            "working first.")


def _recommend_cpu(probe: ProbeResult, params: float | None, priority: str | None) -> Recommendation:
    info = probe.device
    path = [Step("Is there a GPU?", "no: training on the CPU",
                 f"PyTorch sees no CUDA or ROCm device, so the probe measured the CPU ({info.name}).")]
    speeds = _Speeds((), probe)
    gain, src = speeds.ratio("bf16", "fp32")
    native = "has" if info.bf16 else "has no"
    if gain is None:
        worth = info.bf16
        reason = f"No measurement; the CPU {native} bf16 dot-product instructions (AVX512-BF16 / AMX)."
    else:
        worth = gain >= SPEEDUP_WORTH
        shown, origin = speeds.ratio_text("bf16", "fp32", gain, src)
        origin = origin.replace("measured figures", "measured", 1)
        reason = (f"bf16 matmuls ran at {shown} the float32 rate ({origin}); the CPU {native} bf16 dot-product "
                  "instructions (AVX512-BF16 / AMX).")
    path.append(Step("Is bf16 clearly faster than float32 on this CPU?", "yes" if worth else "no", reason))
    size_step, large = _size_step(params)
    path.append(size_step)
    path.append(_priority_step(priority))
    use_bf16 = worth and (priority == "speed" or (priority is None and large))
    precision = "bf16-mixed" if use_bf16 else "32-true"
    notes = ["TF32 is a GPU tensor-core format: leave tf32_matmul_precision unset for CPU training ('medium' "
             "would let oneDNN use bf16 inside float32 matmuls)."]
    if use_bf16:
        notes.append("CPU autocast uses bf16 (torch.autocast('cpu') defaults to bfloat16); Lightning turns "
                     "'16-mixed' on the CPU into 'bf16-mixed' with a warning, so write 'bf16-mixed'.")
    return Recommendation(
        device="cpu",
        targets=("CPU",),
        precision=precision,
        tf32_matmul_precision=None,
        priority=priority,
        params=params,
        params_assumed=params is None,
        path=tuple(path),
        notes=tuple(notes),
        evidence=evidence(probe),
        measured=True,
    )


def evidence(probe: ProbeResult) -> tuple[str, ...]:
    """One sentence per measurement, for the text report: each format's speed judged against the datasheet and
    the best published measurement, the user's shapes, the other GPUs, the numeric check and loss scaling."""
    from precisionlint.advise.probe.figures import unreliable_note
    from precisionlint.advise.probe.judge import verdicts

    out: list[str] = []
    for t, verdict in zip(probe.timings, verdicts(probe), strict=True):
        label = "fp32 (TF32 off)" if t.fmt == "fp32" and probe.device.is_gpu else t.fmt
        low, high = t.tflops_range
        spread = f", {_figure(low)}-{_figure(high)} across repeats" if len(t.samples_s) > 1 else ""
        unsettled = "" if t.settled else "; the speed had not settled after the warm-up"
        if not t.reliable and not verdict.comparison:  # a comparison gives the caveat itself
            unsettled += f"; {unreliable_note(t.fmt, t.spread, len(t.samples_s))}"
        sentence = (f"{label} matmul {t.size}x{t.size}: {_figure(t.tflops)} TFLOP/s (median of {t.repeats} x {t.inner} "
                    f"calls{spread}{unsettled})")
        if verdict.comparison:
            sentence += f", {verdict.comparison}"
        out.append(f"{sentence}: {verdict.conclusion}" if verdict.conclusion else sentence + ".")
    for t in probe.shape_timings:
        m, n, k = t.dims
        sentence = (f"{t.fmt} {t.shape} ({m}x{n}x{k}): {_figure(t.tflops)} TFLOP/s (median of {t.repeats} x "
                    f"{t.inner} calls)")
        if t.achievable_tflops:  # the shape a published figure was measured at: judged against it
            from precisionlint.advise.probe.judge import judge_timing

            verdict = judge_timing(t, probe)
            sentence += f", {verdict.comparison}, made at this shape: {verdict.conclusion}"
        out.append(sentence if t.achievable_tflops else sentence + ".")
    for issue in probe.alignment:
        out.append(f"{issue.shape}: {issue.dimension} = {issue.value} is {issue.consequence}.")
    for s in probe.skipped:
        out.append(f"{s.fmt}: not measured, {s.reason}.")
    for peer in probe.peers:
        out.append(peer.sentence)
    readings = probe.telemetry
    if readings is not None:
        shown = []
        if readings.sm_clock_mhz is not None:
            of = f" of {readings.sm_clock_max_mhz:.0f}" if readings.sm_clock_max_mhz else ""
            shown.append(f"SM clock {readings.sm_clock_mhz:.0f}{of} MHz")
        if readings.power_draw_w is not None:
            of = f" of {readings.power_limit_w:.0f}" if readings.power_limit_w else ""
            shown.append(f"power up to {readings.power_draw_w:.0f}{of} W")
        shown.append(f"throttle reasons: {', '.join(readings.throttle_reasons) or 'none'}")
        shown.append(f"other processes on the GPU: {len(readings.other_processes) or 'none'}")
        out.append(f"Driver readings during the run ({readings.source}, {readings.samples} samples): "
                   f"{'; '.join(shown)}.")
    if probe.numerics:
        parts = ", ".join(f"{n.fmt} {n.relative_error:.1e}" for n in probe.numerics)
        out.append(f"Relative error of a {probe.numerics[0].size}x{probe.numerics[0].size} matmul against "
                   f"float64 on the same data (max abs error / mean abs of the float64 product): {parts}.")
    ls = probe.loss_scaling
    if ls is not None:
        out.append(f"fp16 flushes magnitudes below {ls.flush_threshold:.2e} to zero: of {ls.samples:,} "
                   f"gradient-like values spread log-uniformly over [{ls.low:g}, {ls.high:g}], "
                   f"{ls.underflow_unscaled:.1%} become 0 unscaled, {ls.underflow_scaled:.1%} after scaling by "
                   f"2**{int(round(_log2(ls.scale)))} ({ls.overflow_scaled:.1%} overflow to inf).")
    out.extend(probe.notes)
    return tuple(out)


def _figure(value: float) -> str:
    """1502.8 -> '1503', 51.04 -> '51', 0.01234 -> '0.0123': three significant digits, no exponent above 1000."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _log2(value: float) -> float:
    import math

    return math.log2(value)
