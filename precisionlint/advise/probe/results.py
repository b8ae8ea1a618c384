"""The probe's records: plain dataclasses with a JSON form, and back.

Everything downstream (the verdicts, the advisor's decision tree, the text, JSON and HTML reports) reads these
records and nothing else, so a run saved as JSON can be judged, recommended from and drawn again without torch.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field, fields
from typing import Any

# A timing whose batches spread more than this ((slowest - fastest) / median) is too unsteady for a ratio or a
# percentage to two digits: figures.py writes what it supports.
UNRELIABLE_SPREAD = 0.25
REFERENCE_MAXIMUM = "best published measurement"


@dataclass(frozen=True)
class DeviceInfo:
    """What the probe learned about one device. `kind` is "cuda" for NVIDIA and ROCm GPUs, "cpu" otherwise.

    bf16 / tf32 / fp8 are native hardware support (compute capability >= 8.0 / 8.0 / 8.9, or the AMD ISA),
    not torch.cuda.is_bf16_supported(), which is True under emulation. `fp8_kernel` says whether this torch
    build has a scaled fp8 matmul (torch.nn.functional.scaled_mm or torch._scaled_mm), the only way to run an
    fp8 matmul without Transformer Engine.
    """

    kind: str
    name: str
    compute_capability: tuple[int, int] | None = None
    gcn_arch: str | None = None
    memory_bytes: int | None = None
    multiprocessors: int | None = None
    torch_version: str = ""
    cuda_version: str | None = None
    hip_version: str | None = None
    bf16: bool = False
    tf32: bool = False
    fp8: bool = False
    fp8_kernel: bool = False
    index: int = 0
    cpu_flags: tuple[str, ...] = ()
    uuid: str | None = None  # "GPU-...", as nvidia-smi names the device (indices differ under CUDA_VISIBLE_DEVICES)

    @property
    def is_gpu(self) -> bool:
        return self.kind == "cuda"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["compute_capability"] = (
            f"{self.compute_capability[0]}.{self.compute_capability[1]}" if self.compute_capability else None
        )
        data.pop("cpu_flags")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeviceInfo:
        values = _known(cls, data)
        cc = values.get("compute_capability")
        if isinstance(cc, str) and "." in cc:
            major, minor = cc.split(".", 1)
            values["compute_capability"] = (int(major), int(minor))
        return cls(**values)


@dataclass(frozen=True)
class Timing:
    """Achieved matmul throughput of one format on one shape: the median of `repeats` timed batches of `inner`
    back-to-back matmuls, each batch timed by one pair of CUDA events (perf_counter on the CPU).

    The shape is M x N x K (an (M, K) by (K, N) product, 2*M*N*K floating-point operations); the square
    reference leaves m, n, k unset and uses `size` for all three. `samples_s` are the per-matmul seconds of each
    timed batch, so the spread is visible, not only the median.
    """

    fmt: str
    size: int
    median_s: float  # seconds per matmul
    repeats: int
    inner: int = 1
    peak_tflops: float | None = None
    achievable_tflops: float | None = None
    samples_s: tuple[float, ...] = ()
    warmup_batches: int = 0
    settled: bool = True  # the warm-up saw two consecutive batches agree before the bound ran out
    api: str = ""  # e.g. "torch.mm", "torch.nn.functional.scaled_mm"
    shape: str = "square"  # "square" or the name of a user shape ("mlp up")
    m: int | None = None
    n: int | None = None
    k: int | None = None
    # What achievable_tflops is ("best published measurement", or "typical published measurement at MxNxK")
    # and where it was published; None without a figure.
    reference: str | None = None
    reference_source: str | None = None
    reference_shape: str | None = None  # MxNxK the published figure was measured at

    @property
    def dims(self) -> tuple[int, int, int]:
        return (self.m or self.size, self.n or self.size, self.k or self.size)

    @property
    def flop(self) -> float:
        m, n, k = self.dims
        return 2.0 * m * n * k

    @property
    def tflops(self) -> float:
        return self.flop / self.median_s / 1e12

    @property
    def fraction_of_peak(self) -> float | None:
        return self.tflops / self.peak_tflops if self.peak_tflops else None

    @property
    def fraction_of_achievable(self) -> float | None:
        return self.tflops / self.achievable_tflops if self.achievable_tflops else None

    @property
    def spread(self) -> float:
        """(slowest - fastest batch) / median: how far apart the repeats were, as a fraction."""
        if len(self.samples_s) < 2:
            return 0.0
        return (max(self.samples_s) - min(self.samples_s)) / statistics.median(self.samples_s)

    @property
    def reliable(self) -> bool:
        """The batches agree within UNRELIABLE_SPREAD: a ratio or percentage of this figure holds two digits. A
        figure from one timed batch (the budget ran out) shows no spread and is not reliable either; a record
        without its batches (built by hand) is taken as it is."""
        return len(self.samples_s) != 1 and self.spread <= UNRELIABLE_SPREAD

    @property
    def tflops_range(self) -> tuple[float, float]:
        """(slowest, fastest) batch in TFLOP/s."""
        if not self.samples_s:
            return (self.tflops, self.tflops)
        return (self.flop / max(self.samples_s) / 1e12, self.flop / min(self.samples_s) / 1e12)

    def to_json(self) -> dict[str, Any]:
        m, n, k = self.dims
        low, high = self.tflops_range
        return {
            "format": self.fmt, "shape": self.shape, "m": m, "n": n, "k": k, "size": self.size,
            "tflops": sig(self.tflops), "tflops_min": sig(low), "tflops_max": sig(high),
            "spread": round(self.spread, 4), "reliable": self.reliable, "median_ms": sig(self.median_s * 1e3, 6),
            "samples_ms": [sig(s * 1e3, 6) for s in self.samples_s],
            "repeats": self.repeats, "inner": self.inner,
            "warmup_batches": self.warmup_batches, "settled": self.settled, "api": self.api,
            "peak_tflops": self.peak_tflops,
            "fraction_of_peak": None if self.fraction_of_peak is None else round(self.fraction_of_peak, 4),
            "achievable_tflops": self.achievable_tflops,
            "fraction_of_achievable": (None if self.fraction_of_achievable is None
                                       else round(self.fraction_of_achievable, 4)),
            "reference": self.reference, "reference_source": self.reference_source,
            "reference_shape": self.reference_shape,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Timing:
        square = data.get("shape", "square") == "square"
        return cls(
            fmt=data["format"], size=int(data["size"]), median_s=float(data["median_ms"]) / 1e3,
            repeats=int(data["repeats"]), inner=int(data.get("inner", 1)),
            peak_tflops=data.get("peak_tflops"), achievable_tflops=data.get("achievable_tflops"),
            samples_s=tuple(float(s) / 1e3 for s in data.get("samples_ms", ())),
            warmup_batches=int(data.get("warmup_batches", 0)), settled=bool(data.get("settled", True)),
            api=str(data.get("api", "")), shape=str(data.get("shape", "square")),
            m=None if square else data.get("m"), n=None if square else data.get("n"),
            k=None if square else data.get("k"),
            # A run saved before the JSON named its reference had only the best published measurements.
            reference=data.get("reference") or (REFERENCE_MAXIMUM if data.get("achievable_tflops") else None),
            reference_source=data.get("reference_source"), reference_shape=data.get("reference_shape"),
        )


@dataclass(frozen=True)
class Skipped:
    fmt: str
    reason: str


@dataclass(frozen=True)
class NumericCheck:
    """One format's matmul against a float64 product of the same data, in the form of PyTorch's TF32 note:
    `max_abs_error` = max |product - reference| and `relative_error` = max_abs_error / mean |reference|."""

    fmt: str
    size: int
    relative_error: float
    max_abs_error: float | None = None


@dataclass(frozen=True)
class LossScaling:
    """What fp16 does to small gradients, with and without multiplying by the loss scale first."""

    samples: int
    low: float
    high: float
    scale: float
    underflow_unscaled: float  # fraction of nonzero values that become 0 in fp16
    underflow_scaled: float
    overflow_scaled: float  # fraction that become inf after scaling

    @property
    def flush_threshold(self) -> float:
        """Magnitudes below this round to zero in fp16: half the smallest subnormal (2**-24)."""
        return 2.0**-25

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "flush_threshold": self.flush_threshold}


@dataclass(frozen=True)
class Telemetry:
    """What the driver reported while the probe ran (nvidia-smi or NVML); every field may be missing.

    Clocks in MHz, power in W. `throttle_reasons` are the reasons seen active in any sample, in NVML's words
    (sw_power_cap, hw_slowdown, sw_thermal_slowdown, ...), the idle reason left out. `other_processes` are
    compute processes on this GPU other than the probe: (pid, name, used MiB).
    """

    source: str  # "nvidia-smi" | "nvml"
    samples: int = 0
    sm_clock_mhz: float | None = None  # median over the samples taken under load
    sm_clock_max_mhz: float | None = None
    power_draw_w: float | None = None  # highest sample
    power_limit_w: float | None = None  # enforced limit
    power_default_limit_w: float | None = None
    temperature_c: float | None = None  # highest sample
    throttle_reasons: tuple[str, ...] = ()
    other_processes: tuple[tuple[int, str, float | None], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["throttle_reasons"] = list(self.throttle_reasons)
        data["other_processes"] = [{"pid": p, "name": name, "used_mib": mib} for p, name, mib in self.other_processes]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Telemetry:
        values = _known(cls, data)
        values["throttle_reasons"] = tuple(data.get("throttle_reasons", ()))
        values["other_processes"] = tuple((int(p["pid"]), str(p.get("name", "")), p.get("used_mib"))
                                          for p in data.get("other_processes", ()))
        return cls(**values)


@dataclass(frozen=True)
class AlignmentIssue:
    """A dimension of a user shape that tensor-core kernels handle worse (or, for fp8, refuse)."""

    shape: str
    dimension: str  # "M" | "N" | "K"
    value: int
    multiple: int  # 8, 16 or 64
    formats: tuple[str, ...]
    consequence: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "formats": list(self.formats)}


@dataclass(frozen=True)
class PeerCheck:
    """Another visible GPU, timed in one format at the reference size, against the first device's figure."""

    device: DeviceInfo
    timing: Timing | None
    reference_tflops: float | None
    differs: bool
    sentence: str

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device.to_json(), "timing": self.timing.to_json() if self.timing else None,
                "reference_tflops": self.reference_tflops, "differs": self.differs, "sentence": self.sentence}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PeerCheck:
        return cls(DeviceInfo.from_json(data["device"]),
                   Timing.from_json(data["timing"]) if data.get("timing") else None,
                   data.get("reference_tflops"), bool(data.get("differs")), str(data.get("sentence", "")))


@dataclass(frozen=True)
class ProbeResult:
    device: DeviceInfo
    size: int
    budget_s: float
    elapsed_s: float
    timings: tuple[Timing, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    numerics: tuple[NumericCheck, ...] = ()
    loss_scaling: LossScaling | None = None
    notes: tuple[str, ...] = field(default=())
    shape_timings: tuple[Timing, ...] = ()
    alignment: tuple[AlignmentIssue, ...] = ()
    telemetry: Telemetry | None = None
    peers: tuple[PeerCheck, ...] = ()

    def timing(self, fmt: str) -> Timing | None:
        return next((t for t in self.timings if t.fmt == fmt), None)

    def numeric(self, fmt: str) -> NumericCheck | None:
        return next((n for n in self.numerics if n.fmt == fmt), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device.to_json(),
            "size": self.size,
            "budget_s": self.budget_s,
            "elapsed_s": round(self.elapsed_s, 3),
            "timings": [t.to_json() for t in self.timings],
            "skipped": [asdict(s) for s in self.skipped],
            "numerics": [asdict(n) for n in self.numerics],
            "loss_scaling": self.loss_scaling.to_json() if self.loss_scaling else None,
            "notes": list(self.notes),
            "shape_timings": [t.to_json() for t in self.shape_timings],
            "alignment": [a.to_json() for a in self.alignment],
            "telemetry": self.telemetry.to_json() if self.telemetry else None,
            "peers": [p.to_json() for p in self.peers],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeResult:
        """The record back from `to_json()` output: a saved run can be judged and drawn again without torch."""
        ls = data.get("loss_scaling")
        return cls(
            device=DeviceInfo.from_json(data["device"]),
            size=int(data["size"]),
            budget_s=float(data["budget_s"]),
            elapsed_s=float(data["elapsed_s"]),
            timings=tuple(Timing.from_json(t) for t in data.get("timings", ())),
            skipped=tuple(Skipped(s["fmt"], s["reason"]) for s in data.get("skipped", ())),
            numerics=tuple(NumericCheck(**_known(NumericCheck, n)) for n in data.get("numerics", ())),
            loss_scaling=LossScaling(**_known(LossScaling, ls)) if ls else None,
            notes=tuple(data.get("notes", ())),
            shape_timings=tuple(Timing.from_json(t) for t in data.get("shape_timings", ())),
            alignment=tuple(AlignmentIssue(**{**_known(AlignmentIssue, a), "formats": tuple(a["formats"])})
                            for a in data.get("alignment", ())),
            telemetry=Telemetry.from_json(data["telemetry"]) if data.get("telemetry") else None,
            peers=tuple(PeerCheck.from_json(p) for p in data.get("peers", ())),
        )


def sig(value: float, digits: int = 4) -> float:
    """`value` rounded to `digits` significant digits (a CPU's 0.0012 TFLOP/s must not print as 0.0)."""
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return value
    return float(f"{value:.{digits}g}")


def _known(cls: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of `data` that are fields of the dataclass `cls` (derived keys like "flush_threshold" dropped)."""
    names = {f.name for f in fields(cls)}
    return {key: value for key, value in data.items() if key in names}
