"""Is the measured card healthy? Each figure against the datasheet peak and the best published measurement.

A datasheet peak is never reached (H100 SXM bf16: 989 TFLOP/s on paper, about 795 at best in practice), so the
verdict is taken against a published measurement (hardware.achievable): one made at the probe's own matrix size
where there is one (a "typical" figure), else the maximum achievable one, the best of a shape search
(hardware.ACHIEVABLE_TFLOPS). Below HEALTHY_FRACTION of it the card is slow, and the driver's readings
(monitor.py) say why it might be.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from precisionlint.advise.probe.figures import percent_text, unreliable_note
from precisionlint.advise.probe.results import (
    REFERENCE_MAXIMUM,
    UNRELIABLE_SPREAD,
    DeviceInfo,
    PeerCheck,
    ProbeResult,
    Telemetry,
    Timing,
    sig,
)

HEALTHY_FRACTION = 0.85
LOW_CLOCK_FRACTION = 0.9  # an SM clock below 90% of its maximum under load is worth mentioning
POWER_AT_LIMIT = 0.95
SMALL_GPU_SIZE = 4096  # below this a big card's tensor cores are not kept busy

_REASON_TEXT = {
    "sw_power_cap": "the driver capped the clock to stay within the power limit",
    "hw_slowdown": "the hardware slowed the clock (power brake or overheating)",
    "hw_thermal_slowdown": "the hardware slowed the clock because it is too hot",
    "sw_thermal_slowdown": "the driver slowed the clock because the GPU or its memory is too hot",
    "hw_power_brake_slowdown": "an external power brake (the power supply or the system) slowed the clock",
    "applications_clocks_setting": "application clocks are set below the maximum (nvidia-smi -ac)",
    "sync_boost": "the clock is held to the slowest GPU of a sync-boost group",
    "display_clock_setting": "display clock setting",
}


@dataclass(frozen=True)
class Verdict:
    fmt: str
    tflops: float
    peak_tflops: float | None
    achievable_tflops: float | None
    status: str  # "ok" | "low" | "unjudged" (no achievable figure for this card and format)
    causes: tuple[str, ...] = ()
    spread: float = 0.0  # of the timed batches: above UNRELIABLE_SPREAD the percentages are rounded and marked
    reference: str = REFERENCE_MAXIMUM  # what achievable_tflops is: hardware.Achievable.label (and shape)
    batches: int | None = None  # timed batches behind the figure (None: not recorded)

    @property
    def reliable(self) -> bool:
        return self.batches != 1 and self.spread <= UNRELIABLE_SPREAD

    @property
    def fraction_of_peak(self) -> float | None:
        return self.tflops / self.peak_tflops if self.peak_tflops else None

    @property
    def fraction_of_achievable(self) -> float | None:
        return self.tflops / self.achievable_tflops if self.achievable_tflops else None

    @property
    def comparison(self) -> str:
        """'92% of the 989.4 TFLOP/s datasheet peak, 99% of the 794.5 TFLOP/s best published measurement'."""
        parts = []
        if self.fraction_of_peak is not None:
            parts.append(f"{percent_text(self.fraction_of_peak, self.reliable)} of the {self.peak_tflops:g} "
                         "TFLOP/s datasheet peak")
        if self.fraction_of_achievable is not None:
            parts.append(f"{percent_text(self.fraction_of_achievable, self.reliable)} of the "
                         f"{self.achievable_tflops:g} TFLOP/s {self.reference}")
        text = ", ".join(parts)
        caveat = unreliable_note(self.fmt, self.spread, self.batches)
        return f"{text} ({caveat})" if text and caveat else text

    @property
    def conclusion(self) -> str:
        probably = "" if self.reliable else "probably "
        if self.status == "low":
            return (f"{probably}below {HEALTHY_FRACTION:.0%} of what this card achieves. Possible causes: "
                    + "; ".join(self.causes) + ".")
        if self.status == "ok":
            return f"{probably}as fast as this card gets."
        return ""

    @property
    def sentence(self) -> str:
        text = f"{self.fmt}: {self.tflops:.3g} TFLOP/s" + (f", {self.comparison}" if self.comparison else "")
        return f"{text}: {self.conclusion}" if self.conclusion else text + "."

    def to_json(self) -> dict[str, Any]:
        return {"format": self.fmt, "tflops": sig(self.tflops), "peak_tflops": self.peak_tflops,
                "achievable_tflops": self.achievable_tflops,
                "fraction_of_peak": None if self.fraction_of_peak is None else round(self.fraction_of_peak, 4),
                "fraction_of_achievable": (None if self.fraction_of_achievable is None
                                           else round(self.fraction_of_achievable, 4)),
                "reference": self.reference if self.achievable_tflops else None,
                "status": self.status, "reliable": self.reliable, "causes": list(self.causes),
                "sentence": self.sentence}


def possible_causes(telemetry: Telemetry | None, info: DeviceInfo, size: int) -> list[str]:
    """Why a figure may be low, from what the driver reported during the run (most specific first)."""
    causes: list[str] = []
    if info.is_gpu and size < SMALL_GPU_SIZE:
        causes.append(f"the {size}x{size} matrices are small for this card (try --size 8192)")
    if telemetry is None:
        causes.append("no clock or power readings (nvidia-smi was not found or did not answer), so throttling, a "
                      "power cap and other processes could not be checked: nvidia-smi -q -d CLOCK,POWER,PERFORMANCE")
        return causes
    t = telemetry
    if t.sm_clock_mhz is not None and t.sm_clock_max_mhz and t.sm_clock_mhz < LOW_CLOCK_FRACTION * t.sm_clock_max_mhz:
        causes.append(f"the SM clock ran at {t.sm_clock_mhz:.0f} of {t.sm_clock_max_mhz:.0f} MHz")
    for reason in t.throttle_reasons:
        causes.append(f"throttle reason {reason}: {_REASON_TEXT.get(reason, 'reported by the driver')}")
    if t.power_limit_w and t.power_default_limit_w and t.power_limit_w < 0.98 * t.power_default_limit_w:
        causes.append(f"the power limit is {t.power_limit_w:.0f} W, below this card's default "
                      f"{t.power_default_limit_w:.0f} W")
    if t.power_draw_w and t.power_limit_w and t.power_draw_w >= POWER_AT_LIMIT * t.power_limit_w:
        causes.append(f"the power draw reached {t.power_draw_w:.0f} W of the {t.power_limit_w:.0f} W limit")
    if t.temperature_c is not None and t.temperature_c >= 85:
        causes.append(f"the GPU reached {t.temperature_c:.0f} C")
    if t.other_processes:
        listed = ", ".join(f"pid {pid} ({name or '?'}"
                           + (f", {mib:.0f} MiB" if mib is not None else "") + ")"
                           for pid, name, mib in t.other_processes[:4])
        more = f" and {len(t.other_processes) - 4} more" if len(t.other_processes) > 4 else ""
        causes.append(f"other processes were using this GPU: {listed}{more}")
    if not causes:
        causes.append("the driver reported full clocks, no throttling and no other process: compare the torch "
                      "and CUDA versions with the reference's, and check the GPU with nvidia-smi -q")
    return causes


def judge_timing(timing: Timing, result: ProbeResult) -> Verdict:
    if timing.achievable_tflops is None:
        return Verdict(timing.fmt, timing.tflops, timing.peak_tflops, None, "unjudged", spread=timing.spread,
                       batches=len(timing.samples_s))
    reference = timing.reference or REFERENCE_MAXIMUM
    if timing.tflops >= HEALTHY_FRACTION * timing.achievable_tflops:
        return Verdict(timing.fmt, timing.tflops, timing.peak_tflops, timing.achievable_tflops, "ok",
                       spread=timing.spread, batches=len(timing.samples_s), reference=reference)
    causes = possible_causes(result.telemetry, result.device, result.size)
    measured = "x".join(str(d) for d in timing.dims)
    if timing.reference_shape and timing.reference_shape != measured and reference == REFERENCE_MAXIMUM:
        # The maximum is the best shape of a search: a square matmul can fall short of it on a healthy card
        # (a B200 measured 81% of its maximum at 8192-cubed on one build). Timing that shape settles it.
        causes.insert(0, f"the best published measurement was made at {timing.reference_shape}, the best shape of "
                         f"a search, and a {measured} matmul can reach less on a healthy card: time that shape "
                         f"with --shapes {timing.reference_shape} to compare like with like")
    return Verdict(timing.fmt, timing.tflops, timing.peak_tflops, timing.achievable_tflops, "low",
                   tuple(causes), spread=timing.spread, batches=len(timing.samples_s), reference=reference)


def verdicts(result: ProbeResult) -> list[Verdict]:
    """One verdict per format timed at the square reference size."""
    return [judge_timing(t, result) for t in result.timings]


def compare_peer(reference: Timing | None, info: DeviceInfo, timing: Timing | None) -> PeerCheck:
    """Does another GPU of this machine run the same matmul at the first one's speed, within the spread?"""
    label = f"GPU {info.index} ({info.name})"
    if timing is None or reference is None:
        return PeerCheck(info, timing, reference.tflops if reference else None, False,
                         f"{label}: not measured.")
    # The two medians differ "by more than the run's spread" when their gap exceeds the wider of the two
    # spreads (slowest to fastest batch), with a floor of 2% for runs whose batches all agreed.
    tolerance = max(reference.spread, timing.spread, 0.02)
    gap = (timing.tflops - reference.tflops) / reference.tflops
    differs = abs(gap) > tolerance
    relation = (f"{abs(gap):.0%} {'slower' if gap < 0 else 'faster'} than GPU 0, more than the run's spread of "
                f"{tolerance:.0%}: " + ("a slow card in this node; check it with nvidia-smi -q -d "
                                        "CLOCK,POWER,PERFORMANCE" if gap < 0 else "GPU 0 is the slow one")
                if differs else f"within the run's spread of {tolerance:.0%} of GPU 0")
    return PeerCheck(info, timing, reference.tflops, differs,
                     f"{label}: {timing.fmt} {timing.tflops:.1f} TFLOP/s, {relation}.")
