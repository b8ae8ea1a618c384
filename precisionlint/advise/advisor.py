"""The precision decision tree: target hardware (+ optional measurements) -> a Recommendation (plain data).

The tree is seed 004's quick decision guide, corrected where FACTS.md shows the seed wrong:

* TF32 is not PyTorch's default for float32 matmuls (torch.backends.cuda.matmul.allow_tf32 is False since 1.12;
  cuDNN convolutions do default to TF32). Leaving the setting unset means "highest", full IEEE float32.
* "medium" is the same as "high" on CUDA (cuBLAS has no bf16 path for float32 matmuls): we write "high".
* The TF32 setting is not ignored under mixed precision: matmuls outside autocast (a metric or loss computed after
  the autocast block, evaluation without autocast) still run in float32 and follow it.
* On GeForce Ampere/Ada cards (and the A10G) the datasheet TF32 rate equals the float32 rate, so TF32 costs
  precision for no speed there; the tree compares formats by their figures instead of by architecture name.

Rendering (text, JSON) lives in advise_command.py; this module only decides and spells settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from precisionlint.hardware.detect import device_from_description
from precisionlint.hardware.gpu import Gpu, fleet_names

if TYPE_CHECKING:
    from precisionlint.advise.probe.results import ProbeResult
    from precisionlint.core.model import Document

LARGE_MODEL_PARAMS = 25e6  # ResNet-50 (25.6M): seed 004's "large model" line
FP8_HINT_PARAMS = 1e9  # FP8 is worth its tuning only for large transformer training
SPEEDUP_WORTH = 1.2  # a format must be this much faster (datasheet or measured) to be chosen for speed

PRIORITIES = ("speed", "accuracy")


@dataclass(frozen=True)
class Step:
    """One node of the decision path: the question, the answer for these targets, and why."""

    question: str
    answer: str
    reason: str


@dataclass(frozen=True)
class Recommendation:
    device: str  # "gpu" | "cpu"
    targets: tuple[str, ...]
    precision: str  # Lightning 2.x spelling: "bf16-mixed" | "16-mixed" | "32-true"
    tf32_matmul_precision: str | None  # "high" | "highest" | None: no TF32 on this hardware, leave unset
    priority: str | None
    params: float | None
    params_assumed: bool
    path: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()  # sentences from the probe's measurements
    measured: bool = False
    tf32_available: bool = False  # every target has TF32 (so an unset TF32 setting is a choice, not a limit)

    @property
    def dtype(self) -> str:
        """The 16-bit type of the mixed precision (FP8 training runs what is not FP8 in bf16), or fp32."""
        return {"bf16-mixed": "bf16", "16-mixed": "fp16", FP8_PRECISION: "bf16"}.get(self.precision, "fp32")

    @property
    def fp8(self) -> bool:
        """FP8 training (Transformer Engine): kept from a configuration that already uses it, where every
        target has FP8 tensor cores."""
        return self.precision == FP8_PRECISION

    @property
    def grad_scaler(self) -> bool:
        return self.dtype == "fp16"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["dtype"] = self.dtype
        data["fp8"] = self.fp8
        data["grad_scaler"] = self.grad_scaler
        return data


# Lightning's spelling of FP8 training (Transformer Engine, bf16 for the rest); Accelerate says mixed_precision fp8.
FP8_PRECISION = "transformer-engine"


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
) -> Recommendation:
    """Walk the tree for `targets` (every GPU of a fleet must run the result well), or for the device the
    probe measured (then its timings decide between formats that the datasheet says are faster).
    `current_fp8`: the user's configuration already trains in FP8; it is kept where every target runs FP8
    and accuracy is not the priority (the tree never proposes FP8 by itself: it needs Transformer Engine or
    torchao and scaling recipes, which only the user can say they have)."""
    if priority is not None and priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {PRIORITIES}, not {priority!r}")
    if probe is not None:
        if not probe.device.is_gpu:
            return _recommend_cpu(probe, params, priority)
        targets = (device_from_description(probe.device),)
    targets = tuple(targets)
    if not targets:
        raise ValueError("no target GPU: name one (--gpu) or measure this machine (--probe)")
    return _recommend_gpu(targets, params, priority, probe, current_fp8)


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
                   probe: ProbeResult | None, current_fp8: bool = False) -> Recommendation:
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


# ---------------------------------------------------------------------------------------------------------------
# Spelling the recommendation in each framework
# ---------------------------------------------------------------------------------------------------------------

def recommendation_settings(rec: Recommendation) -> dict[str, object]:
    """Canonical setting name -> recommended value, each in the vocabulary of the framework that owns the name
    (frameworks.py): Lightning `precision`, `tf32_matmul_precision`; Transformers (and DeepSpeed `enabled`)
    `fp16` / `bf16`; Transformers `tf32` (None: leave unset); Accelerate `mixed_precision`."""
    tf32_flag: bool | None = None
    if rec.tf32_matmul_precision == "high":
        tf32_flag = True
    elif rec.tf32_matmul_precision == "highest":
        tf32_flag = False
    return {
        "precision": rec.precision,
        "tf32_matmul_precision": rec.tf32_matmul_precision,
        "fp16": rec.dtype == "fp16",
        "bf16": rec.dtype == "bf16",
        "tf32": tf32_flag,
        "mixed_precision": "fp8" if rec.fp8 else {"bf16": "bf16", "fp16": "fp16"}.get(rec.dtype, "no"),
    }


SNIPPET_TITLES = {
    "trainer_config": "[trainer_config] TOML",
    "lightning_yaml": "Lightning YAML (LightningCLI)",
    "lightning_python": "Lightning Trainer(...)",
    "transformers": "Hugging Face TrainingArguments",
    "accelerate": "Accelerate config (accelerate config / --config_file)",
    "deepspeed": "DeepSpeed JSON",
    "pytorch": "Plain PyTorch",
}


def snippets(rec: Recommendation) -> dict[str, str]:
    """Ready-to-paste configuration for each framework, keyed as in SNIPPET_TITLES."""
    tf32 = rec.tf32_matmul_precision
    accelerator = "gpu" if rec.device == "gpu" else "cpu"
    set_tf32 = f'torch.set_float32_matmul_precision("{tf32}")\n' if tf32 else ""
    tf32_comment = {
        "high": "# TF32 for float32 matmuls: call torch.set_float32_matmul_precision(\"high\") at start-up",
        "highest": "# float32 matmuls stay IEEE (PyTorch's default, \"highest\")",
        None: ("# float32 matmul precision unset: autocast runs the matmuls in 16 bits" if rec.tf32_available
               else "# no TF32 on this hardware: leave the float32 matmul precision unset"),
    }[tf32]
    unset_toml = ("# tf32_matmul_precision: unset (autocast runs the matmuls in 16 bits)" if rec.tf32_available
                  else "# tf32_matmul_precision: leave unset (no TF32 here)")

    toml = f'[trainer_config]\nprecision = "{rec.precision}"\n'
    toml += f'tf32_matmul_precision = "{tf32}"\n' if tf32 else unset_toml + "\n"

    yaml = f"trainer:\n  accelerator: {accelerator}\n  precision: {rec.precision}\n{tf32_comment}\n"

    lightning = (f"{'import torch' + chr(10) if set_tf32 else ''}import lightning as L\n\n{set_tf32}"
                 f'trainer = L.Trainer(accelerator="{accelerator}", precision="{rec.precision}")\n')

    hf_args = ['output_dir="out"']
    if rec.dtype == "bf16":
        hf_args.append("bf16=True")
    elif rec.dtype == "fp16":
        hf_args.append("fp16=True")
    if rec.device == "cpu":
        hf_args.append("use_cpu=True")
    if tf32 == "high":
        hf_args.append("tf32=True")
    elif tf32 == "highest":
        hf_args.append("tf32=False")
    transformers = ("from transformers import TrainingArguments\n\n"
                    f"args = TrainingArguments({', '.join(hf_args)})\n")

    mixed = recommendation_settings(rec)["mixed_precision"]
    accelerate = f"mixed_precision: {mixed}\n"
    if rec.device == "cpu":
        accelerate += "use_cpu: true\n"
    accelerate += f"{tf32_comment}\n# or on the command line: accelerate launch --mixed_precision {mixed} train.py\n"

    if rec.dtype == "fp16":
        deepspeed = ('{\n  "fp16": {\n    "enabled": true,\n    "loss_scale": 0,\n    "initial_scale_power": 16,\n'
                     '    "loss_scale_window": 1000,\n    "hysteresis": 2,\n    "min_loss_scale": 1\n  },\n'
                     '  "bf16": {"enabled": false}\n}\n')
    else:
        on = "true" if rec.dtype == "bf16" else "false"
        deepspeed = f'{{\n  "fp16": {{"enabled": false}},\n  "bf16": {{"enabled": {on}}}\n}}\n'

    if rec.fp8:
        # Transformers has no FP8 argument: bf16 in the arguments, FP8 from the Accelerate launch.
        launch = "# FP8: accelerate launch --mixed_precision fp8 train.py\n"
        transformers = transformers.replace("args = ", launch + "args = ")
        accelerate = ("mixed_precision: fp8  # needs Transformer Engine, torchao or MS-AMP installed\n"
                      "# or on the command line: accelerate launch --mixed_precision fp8 train.py\n")
        # DeepSpeed has no FP8 switch: its bf16 block, and FP8 from Transformer Engine layers in the model.
    return {
        "trainer_config": toml,
        "lightning_yaml": yaml,
        "lightning_python": lightning,
        "transformers": transformers,
        "accelerate": accelerate,
        "deepspeed": deepspeed,
        "pytorch": _pytorch_loop(rec),
    }


def _pytorch_loop(rec: Recommendation) -> str:
    device = "cuda" if rec.device == "gpu" else "cpu"
    head = "import torch\n\n"
    if rec.tf32_matmul_precision:
        head += f'torch.set_float32_matmul_precision("{rec.tf32_matmul_precision}")\n'
    if rec.dtype == "fp16":
        return head + (
            f'scaler = torch.amp.GradScaler("{device}")\n'
            "for inputs, targets in loader:\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            f'    with torch.autocast(device_type="{device}", dtype=torch.float16):  # forward and loss only\n'
            "        loss = loss_fn(model(inputs), targets)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)  # before clipping, so the threshold applies to true gradients\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
            "    scaler.step(optimizer)  # skips the step if gradients overflowed\n"
            "    scaler.update()\n"
        )
    if rec.fp8:
        return head + (
            "import transformer_engine.pytorch as te\n"
            "from transformer_engine.common.recipe import DelayedScaling, Format\n\n"
            "recipe = DelayedScaling(fp8_format=Format.HYBRID)  # e4m3 forward, e5m2 gradients\n"
            "for inputs, targets in loader:  # the model's layers are te.Linear / te.TransformerLayer\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            f'    with torch.autocast(device_type="{device}", dtype=torch.bfloat16):  # forward and loss only\n'
            "        with te.fp8_autocast(enabled=True, fp8_recipe=recipe):  # FP8 matmuls in te layers\n"
            "            outputs = model(inputs)\n"
            "        loss = loss_fn(outputs, targets)\n"
            "    loss.backward()  # no GradScaler: the recipe scales each tensor\n"
            "    optimizer.step()\n"
        )
    if rec.dtype == "bf16":
        return head + (
            "for inputs, targets in loader:\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            f'    with torch.autocast(device_type="{device}", dtype=torch.bfloat16):  # forward and loss only\n'
            "        loss = loss_fn(model(inputs), targets)\n"
            "    loss.backward()  # no GradScaler: bf16 has float32's exponent range\n"
            "    optimizer.step()\n"
        )
    return head + (
        "for inputs, targets in loader:  # float32 weights and math, no autocast\n"
        "    optimizer.zero_grad(set_to_none=True)\n"
        "    loss = loss_fn(model(inputs), targets)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    )


# ---------------------------------------------------------------------------------------------------------------
# Comparing with the user's configuration (advise --config)
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    """What to do with one setting of the user's file. action: change | keep | remove | unknown | add."""

    action: str
    key: str
    current: Any
    recommended: Any
    reason: str
    line: int | None = None
    column: int | None = None
    framework: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["current"] = _jsonable(self.current)
        data["recommended"] = _jsonable(self.recommended)
        return data


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@dataclass(frozen=True)
class Comparison:
    path: str
    changes: tuple[Change, ...] = field(default=())

    @property
    def needs_changes(self) -> bool:
        return any(c.action in ("change", "remove", "add") for c in self.changes)


def compare_config(document: Document, rec: Recommendation) -> Comparison:
    """Each precision setting of `document` against the recommendation, plus what is missing."""
    from precisionlint.frameworks import precision_mode

    want = recommendation_settings(rec)
    changes: list[Change] = []
    chooses_precision = False
    has_tf32 = False
    frameworks: set[str] = set()
    for s in document.settings:
        key = s.key_text
        where: dict[str, Any] = {"line": s.span.line, "column": s.span.column, "framework": s.framework}
        frameworks.add(s.framework)
        if s.name in ("precision", "mixed_precision", "fp16", "bf16"):
            chooses_precision = True
            if not s.resolved:
                changes.append(Change("unknown", key, s.value, want[s.name],
                                      "not a literal value: cannot tell what it is at run time", **where))
                continue
            if s.framework == "deepspeed" and s.value == "auto":
                changes.append(Change("keep", key, s.value, s.value,
                                      "'auto' follows the Transformers/Accelerate setting", **where))
                continue
            if s.name == "precision":
                mode = precision_mode(s)
                wanted_dtype = "fp8" if rec.fp8 else rec.dtype
                ok = mode is not None and mode.dtype == wanted_dtype and (
                    mode.kind == ("true" if wanted_dtype == "fp32" else "mixed"))
            else:
                ok = s.value == want[s.name]
            changes.append(Change("keep" if ok else "change", key, s.value,
                                  s.value if ok else want[s.name],
                                  "matches the recommendation" if ok else f"recommended: {rec.precision}", **where))
        elif s.name in ("tf32_matmul_precision", "tf32"):
            has_tf32 = True
            changes.append(_compare_tf32(s, rec, where))
    if document.format == "python":
        regions = _autocast_changes(document, rec)
        chooses_precision = chooses_precision or bool(regions)
        changes.extend(regions)
    if not chooses_precision:
        changes.append(Change("add", "precision", None, rec.precision,
                              "the file sets no training precision; add the snippet for your framework below"))
    if not has_tf32 and rec.tf32_matmul_precision == "high" and chooses_precision:
        if "hf" in frameworks:
            changes.append(Change("add", "tf32", None, True, "enable TF32 for float32 matmuls (tf32: true)"))
        elif any(s.scope == "trainer_config" for s in document.settings):
            changes.append(Change("add", "trainer_config.tf32_matmul_precision", None, "high",
                                  "enable TF32 for float32 matmuls"))
        else:
            changes.append(Change("add", "torch.set_float32_matmul_precision", None, "high",
                                  "call torch.set_float32_matmul_precision(\"high\") at start-up"))
    return Comparison(document.path, tuple(changes))


def _compare_tf32(s: Any, rec: Recommendation, where: dict[str, Any]) -> Change:
    key = s.key_text
    want = rec.tf32_matmul_precision
    if not s.resolved:
        return Change("unknown", key, s.value, want, "not a literal value", **where)
    if want is None and rec.tf32_available:  # mixed precision on TF32 hardware
        enabled = s.value is True or s.value in ("high", "medium")
        if enabled and s.framework == "lightning":
            return Change("remove", key, s.value, None, "under mixed precision it only reaches float32 matmuls "
                          "outside autocast (check reports it as PL104)", **where)
        return Change("keep", key, s.value, s.value, "harmless: it only reaches float32 matmuls outside autocast",
                      **where)
    if s.name == "tf32":  # Transformers' bool
        enabled = s.value is True
        if want is None:
            if enabled:
                return Change("remove", key, s.value, None, "no TF32 on this hardware: tf32=True raises ValueError",
                              **where)
            return Change("keep", key, s.value, s.value, "harmless here", **where)
        ok = enabled == (want == "high")
        return Change("keep" if ok else "change", key, s.value, s.value if ok else want == "high",
                      "matches the recommendation" if ok else f"recommended TF32 setting: {want}", **where)
    value = s.value
    enabled = value in ("high", "medium")
    if want is None:
        if enabled:
            return Change("remove", key, value, None, "no TF32 on this hardware: the setting has no effect", **where)
        return Change("keep", key, value, value, "no effect on this hardware", **where)
    ok = enabled == (want == "high")
    reason = "matches the recommendation"
    if ok and value == "medium":
        reason = "'medium' is the same as 'high' on CUDA"
    return Change("keep" if ok else "change", key, value, value if ok else want,
                  reason if ok else f"recommended: {want!r}", **where)


def _autocast_changes(document: Document, rec: Recommendation) -> list[Change]:
    from precisionlint.script.build import build_script_model

    try:
        regions = build_script_model(document).autocast_regions
    except RecursionError:  # nesting too deep for the model: the settings comparison still stands
        return []
    wanted = {"bf16": "bfloat16", "fp16": "float16"}.get(rec.dtype)
    changes = []
    for region in regions:
        if region.device not in (None, "cuda") or region.enabled is False:
            continue
        explicit = region.dtype_explicit
        span = region.dtype_span if explicit and region.dtype_span is not None else region.span
        key = "torch.autocast(dtype=...)"
        where: dict[str, Any] = {"line": span.line, "column": span.column, "framework": "torch"}
        # The script model fills an omitted dtype with the device default (cuda: float16).
        dtype = region.dtype if (explicit or region.device == "cuda") and not region.unpacked else None
        if dtype is None:
            changes.append(Change("unknown", key, None, wanted, "dtype not known statically", **where))
        elif wanted is None:
            changes.append(Change("remove", key, dtype, None, "recommended: float32 training without autocast",
                                  **where))
        elif dtype == wanted:
            changes.append(Change("keep", key, dtype, dtype, "matches the recommendation", **where))
        elif not explicit:
            changes.append(Change("change", key, dtype, wanted, f"no dtype: CUDA autocast defaults to float16; add "
                                  f"dtype=torch.{wanted} (recommended: {rec.precision})", **where))
        else:
            changes.append(Change("change", key, dtype, wanted, f"recommended: {rec.precision}", **where))
    return changes


def _trains_fp8(setting: Any) -> bool:
    from precisionlint.frameworks import precision_mode

    mode = precision_mode(setting)
    return mode is not None and mode.dtype == "fp8"


def uses_fp8(document: Document) -> bool:
    """Whether a configuration already trains in FP8 (Lightning transformer-engine, Accelerate fp8, ...)."""
    return any(_trains_fp8(s) for s in document.settings if s.name in ("precision", "mixed_precision"))


def changes_for_file(document: Document, rec: Recommendation) -> dict[str, object]:
    """The recommendation as changes to one config file: only the settings of frameworks the file already
    uses (a Lightning file never gains `mixed_precision`), canonical name -> value, None to remove.

    A file with no precision setting yet gets the seed's `[trainer_config]` keys. Defaults are not written
    out (`fp16: false` where fp16 is absent), DeepSpeed's "auto" is left alone (it follows the Trainer), and
    a Transformers `tf32` the user set is kept when the recommendation has no opinion on it."""
    want = recommendation_settings(rec)
    frameworks = {s.framework for s in document.settings}
    scopes = {s.scope for s in document.settings}
    names: list[str] = []
    if not document.settings:
        names = ["precision", "tf32_matmul_precision"]
    if "lightning" in frameworks:
        names.append("precision")
        if "trainer_config" in scopes:
            names.append("tf32_matmul_precision")
    if "hf" in frameworks:
        names += ["fp16", "bf16", "tf32"]
    if "accelerate" in frameworks:
        names.append("mixed_precision")
    if "deepspeed" in frameworks:
        names += ["fp16", "bf16"]
    changes: dict[str, object] = {}
    for name in dict.fromkeys(names):
        value = want[name]
        existing = document.settings_named(name)
        if rec.fp8 and name in ("precision", "mixed_precision") and existing and all(
                _trains_fp8(s) for s in existing):
            continue  # an FP8 spelling of its own (transformer-engine-float16, amp_fp8) stands
        if not existing and (value is None or value is False):
            continue  # absent already means this
        if existing and all(s.value == "auto" for s in existing):
            continue
        if name == "tf32" and value is None:
            continue
        if not existing and name in ("fp16", "bf16") and frameworks == {"deepspeed"}:
            continue  # a DeepSpeed block is not created from nothing: the Trainer's "auto" usually owns it
        changes[name] = value
    return changes
