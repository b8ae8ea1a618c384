"""`run_probe`: measure this machine within a time budget and return one ProbeResult.

Order of work, each step with its share of what is left of the budget: the numeric check of every format against
float64, the loss-scaling check, the timing of every format at the square reference size, the user's shapes in
the card's 16-bit format, then one short timing on each other visible GPU. The driver is sampled throughout.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from precisionlint.advise.probe.device import Backend, CudaApi, CudaBackend, open_backends
from precisionlint.advise.probe.judge import compare_peer
from precisionlint.advise.probe.kernels import (
    FP8_FORMATS,
    api_for,
    formats_for,
    matmul_fn,
    matmul_precision,
    precision_for,
)
from precisionlint.advise.probe.monitor import Monitor
from precisionlint.advise.probe.numerics import check_formats, loss_scaling_check
from precisionlint.advise.probe.results import DeviceInfo, PeerCheck, ProbeResult, Skipped, Timing
from precisionlint.advise.probe.shapes import Shape, alignment_issues
from precisionlint.advise.probe.timing import measure

if TYPE_CHECKING:
    from precisionlint.hardware.achievable import Achievable

DEFAULT_BUDGET_S = 10.0
DEFAULT_GPU_SIZE = 8192  # 8192^3 * 2 = 1.1 TFLOP per matmul: milliseconds even on an H100, so timers are exact
DEFAULT_CPU_SIZE = 1024
NUMERIC_SIZE_GPU = 2048
NUMERIC_SIZE_CPU = 512
SHAPES_SHARE = 0.35  # of the time left after the numeric check, when --shapes is given
PEER_SHARE_S = 0.6  # per other GPU, at most
MINIMAL_S = 0.3  # past the budget, a measurement expected to take less than this is still made (briefly)

Progress = Callable[[str], None]
_EXPECTED_FAILURES = (RuntimeError, TypeError, NotImplementedError, AttributeError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:160]


def _half_format(info: DeviceInfo) -> str:
    """The 16-bit format training would use here: bf16 where it is native (and on CPUs), else fp16."""
    return "bf16" if info.bf16 or not info.is_gpu else "fp16"


def _time_one(backend: Backend, fmt: str, a: Any, b: Any, share: float, peaks: dict[str, float],
              achievable: dict[str, Achievable], shape: Shape | None, size: int) -> Timing:
    torch = backend.torch
    fn = matmul_fn(torch, fmt, a, b, backend.info)
    with matmul_precision(torch, precision_for(fmt)):
        result = measure(backend, fn, share)
    peak_key = "fp8" if fmt in FP8_FORMATS else fmt
    figure = achievable.get(fmt)
    if figure is not None and shape is not None and figure.dims != (shape.m, shape.n, shape.k):
        figure = None  # a user's shape is judged only against a figure published for that very shape
    return Timing(
        fmt, size, result.median_s, len(result.samples_s), result.inner,
        peak_tflops=peaks.get(peak_key), achievable_tflops=figure.tflops if figure else None,
        reference=_reference_text(figure), reference_source=figure.source if figure else None,
        reference_shape=figure.shape if figure else None,
        samples_s=result.samples_s, warmup_batches=result.warmup_batches, settled=result.settled,
        api=api_for(torch, fmt), shape="square" if shape is None else shape.name,
        m=None if shape is None else shape.m, n=None if shape is None else shape.n,
        k=None if shape is None else shape.k,
    )


def _references(info: DeviceInfo, size: int) -> tuple[dict[str, float], dict[str, Achievable]]:
    """(datasheet peaks, published figures) per format for this device, each figure the one to judge a size-cubed
    matmul against (hardware.achievable); empty for a CPU or an unknown card."""
    if not info.is_gpu:
        return {}, {}
    from precisionlint.hardware.achievable import achievable
    from precisionlint.hardware.detect import device_from_description

    gpu = device_from_description(info)
    found = {fmt: figure for fmt in ("fp32", "tf32", "bf16", "fp16", "fp8", "fp8-fast")
             if (figure := achievable(gpu, fmt, (size, size, size))) is not None}
    return dict(gpu.peak_tflops), found


def _reference_text(figure: Achievable | None) -> str | None:
    """'best published measurement', or 'typical published measurement at 8192x8192x8192'."""
    if figure is None:
        return None
    return figure.label if figure.kind == "maximum" else f"{figure.label} at {figure.shape}"


def run_probe(
    budget_s: float = DEFAULT_BUDGET_S,
    size: int | None = None,
    device_index: int | None = None,
    progress: Progress | None = None,
    peaks: dict[str, float] | None = None,
    shapes: list[Shape] | None = None,
    began: float | None = None,
    cuda: CudaApi | None = None,
) -> ProbeResult:
    """Measure the GPUs (or the CPU when there is none) within about `budget_s` seconds from `began` (default:
    now; the command passes its own start so that importing torch counts).

    `device_index` measures that GPU alone; by default every visible GPU is measured, the first one fully.
    `peaks` overrides the datasheet peaks per format. `cuda` replaces torch.cuda (tests simulate a GPU with it).
    Raises ProbeUnavailable without torch, ValueError for a device index that does not exist.
    """
    began = time.perf_counter() if began is None else began
    deadline = began + max(budget_s, 0.1)
    say = progress or (lambda _message: None)
    backends = open_backends(cuda)
    if device_index is not None:
        if not backends[0].info.is_gpu or not 0 <= device_index < len(backends):
            seen = (f"GPUs 0-{len(backends) - 1}" if backends[0].info.is_gpu else "no GPU")
            raise ValueError(f"--device {device_index}: there is no such device (this machine has {seen})")
        backends = [backends[device_index]]
    backend, others = backends[0], backends[1:]
    info = backend.info
    torch = backend.torch
    dev = backend.tensor_device
    if size is None:
        size = DEFAULT_GPU_SIZE if info.is_gpu else DEFAULT_CPU_SIZE
    size = max(16, (size + 15) // 16 * 16)  # fp8 kernels need multiples of 16
    formats = formats_for(info)
    notes: list[str] = []
    if info.is_gpu and info.memory_bytes and 3 * size * size * 4 > info.memory_bytes // 4:
        smaller = max(16, int(math.sqrt(info.memory_bytes // 48)) // 16 * 16)
        notes.append(f"matrix size {size} does not fit comfortably in device memory; using {smaller}")
        size = smaller
    default_peaks, achievable = _references(info, size)
    peaks = default_peaks if peaks is None else peaks

    monitor = None
    if isinstance(backend, CudaBackend) and info.compute_capability is not None:
        monitor = Monitor(info.uuid or str(info.index), info.uuid)
        monitor.start()
    try:
        say(f"checking numerics of {', '.join(formats)} against float64")
        numeric_size = min(size, NUMERIC_SIZE_GPU if info.is_gpu else NUMERIC_SIZE_CPU)
        numerics = check_formats(backend, formats, numeric_size)
        loss_scaling = loss_scaling_check(torch)

        generator = torch.Generator(device=dev).manual_seed(99)
        a32 = torch.randn(size, size, device=dev, dtype=torch.float32, generator=generator)
        b32 = torch.randn(size, size, device=dev, dtype=torch.float32, generator=generator)
        timings: list[Timing] = []
        skipped: list[Skipped] = []
        after_square = SHAPES_SHARE if shapes else 0.0
        peer_time = min(PEER_SHARE_S * len(others), 0.25 * max(deadline - time.perf_counter(), 0.0))
        for position, fmt in enumerate(formats):
            left = (deadline - time.perf_counter()) * (1 - after_square) - peer_time
            # Past the budget a format still gets the shortest honest measurement (a warm-up batch and one
            # timed batch), so that every format has a figure: on a GPU that is a fraction of a second in all.
            share = max(left, 0.0) / (len(formats) - position)
            say(f"timing {fmt} matmul {size}x{size} ({share:.1f} s)")
            try:
                timings.append(_time_one(backend, fmt, a32, b32, share, peaks, achievable, None, size))
            except _EXPECTED_FAILURES as exc:
                skipped.append(Skipped(fmt, f"not supported here: {_first_line(exc)}"))
        if time.perf_counter() > deadline:
            notes.append(f"The {budget_s:g} s budget ran out (importing torch included): the last formats were "
                         "measured with as few batches as possible; raise --budget for steadier figures.")
        if info.is_gpu and "fp8" not in formats:
            skipped.append(Skipped("fp8", "no FP8 tensor cores (needs compute capability 8.9 or newer)"))
        if info.is_gpu and "tf32" not in formats:
            skipped.append(Skipped("tf32", "no TF32 tensor cores on this device"))
        del a32, b32

        shape_timings: list[Timing] = []
        if shapes:
            shape_timings = _time_shapes(backend, shapes, timings, deadline - peer_time, peaks, size, skipped, say,
                                         _shape_references(info, shapes))
        peers = _time_peers(others, timings, _half_format(info), size, deadline, say)
    finally:
        telemetry = monitor.stop() if monitor is not None else None
    return ProbeResult(
        device=info,
        size=size,
        budget_s=budget_s,
        elapsed_s=time.perf_counter() - began,
        timings=tuple(timings),
        skipped=tuple(skipped),
        numerics=tuple(numerics),
        loss_scaling=loss_scaling,
        notes=tuple(notes),
        shape_timings=tuple(shape_timings),
        alignment=tuple(alignment_issues(shapes or [])),
        telemetry=telemetry,
        peers=tuple(peers),
    )


def _shape_references(info: DeviceInfo, shapes: list[Shape]) -> dict[tuple[int, int, int], Achievable]:
    """The published figures of the 16-bit format measured at one of `shapes` (--shapes 2048x2048x13312 on an
    H100 times the shape of its best published bf16 measurement, and is judged against it)."""
    if not info.is_gpu:
        return {}
    from precisionlint.hardware.achievable import achievable
    from precisionlint.hardware.detect import device_from_description

    gpu = device_from_description(info)
    found = {}
    for shape in shapes:
        dims = (shape.m, shape.n, shape.k)
        figure = achievable(gpu, _half_format(info), dims)
        if figure is not None and figure.dims == dims:
            found[dims] = figure
    return found


def _time_shapes(backend: Backend, shapes: list[Shape], square: list[Timing], deadline: float,
                 peaks: dict[str, float], size: int, skipped: list[Skipped], say: Progress,
                 references: dict[tuple[int, int, int], Achievable] | None = None) -> list[Timing]:
    """The user's shapes in the 16-bit format training would use here, within what is left before `deadline`;
    a shape that a published figure was measured at is judged against it."""
    torch = backend.torch
    fmt = _half_format(backend.info)
    reference = next((t for t in square if t.fmt == fmt), None)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[fmt]
    out: list[Timing] = []
    for position, shape in enumerate(shapes):
        left = deadline - time.perf_counter()
        share = left / (len(shapes) - position)
        # One call must fit the share several times over, judged by the square reference's speed; a shape
        # that cheap is measured briefly even past the budget (about ten calls), like the formats above.
        expected = 2.0 * shape.m * shape.n * shape.k / (reference.tflops * 1e12) if reference else None
        if expected is None and share <= 0 or expected is not None and expected * 10 > max(share, MINIMAL_S):
            why = (f"one call would take about {expected:.2g} s" if expected is not None and share > 0
                   else "the time budget was spent")
            skipped.append(Skipped(f"{fmt} {shape.name}", f"{why} (raise --budget)"))
            continue
        say(f"timing {fmt} {shape.name} {shape.text} ({share:.1f} s)")
        generator = torch.Generator(device=backend.tensor_device).manual_seed(7 + position)
        try:
            a = torch.randn(shape.m, shape.k, device=backend.tensor_device, dtype=dtype, generator=generator)
            b = torch.randn(shape.k, shape.n, device=backend.tensor_device, dtype=dtype, generator=generator)
            figure = (references or {}).get((shape.m, shape.n, shape.k))
            out.append(_time_one(backend, fmt, a, b, share, peaks, {fmt: figure} if figure else {}, shape, size))
        except _EXPECTED_FAILURES as exc:  # out of memory for a huge vocabulary, for instance
            skipped.append(Skipped(f"{fmt} {shape.name}", f"not measured: {_first_line(exc)}"))
        finally:
            a = b = None
    return out


def _time_peers(others: list[Backend], square: list[Timing], fmt: str, size: int, deadline: float,
                say: Progress) -> list[PeerCheck]:
    """The reference format on every other GPU, compared with the first GPU's figure."""
    reference = next((t for t in square if t.fmt == fmt), None)
    checks = []
    for position, peer in enumerate(others):
        # Every GPU gets a figure: past the budget, the briefest honest measurement (a fraction of a second).
        share = max(deadline - time.perf_counter(), 0.0) / (len(others) - position)
        timing = None
        say(f"timing {fmt} on GPU {peer.info.index} ({share:.1f} s)")
        torch = peer.torch
        generator = torch.Generator(device=peer.tensor_device).manual_seed(99)
        a = torch.randn(size, size, device=peer.tensor_device, dtype=torch.float32, generator=generator)
        b = torch.randn(size, size, device=peer.tensor_device, dtype=torch.float32, generator=generator)
        try:
            timing = _time_one(peer, fmt, a, b, share, {}, {}, None, size)
        except _EXPECTED_FAILURES:
            timing = None
        del a, b
        checks.append(compare_peer(reference, peer.info, timing))
    return checks
