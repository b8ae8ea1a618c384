"""A simulated CUDA device for the probe's tests: this machine has no GPU.

It replaces only what cannot exist here, through the interface the real probe uses (probe.device.CudaApi):
the torch.cuda functions the probe calls (is_available, device_count, get_device_properties, synchronize,
device, Event) and the time the GPU's kernels take. The matmuls themselves run for real on the CPU, with real
torch; a TorchFunctionMode sees each one (torch.mm, torch._scaled_mm, torch.nn.functional.scaled_mm) and
advances the simulated device clock by FLOPs / the card's rate for that format, which the fake CUDA events
read. So the probe's own code decides formats, the TF32 switch, the fp8 API, warm-up, batching, medians and
spreads, exactly as on a GPU; only the seconds come from the simulation.

Also: a stand-in nvidia-smi (a script on PATH) that answers the probe's queries with canned readings.
"""

from __future__ import annotations

import random
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from precisionlint.advise.probe.device import CudaApi

# Rates (TFLOP/s) near what an H100 SXM reaches at its best (the published figures: bf16 794.5, fp8 1402.6).
H100_RATES = {"fp64": 50.0, "fp32": 51.0, "tf32": 370.0, "bf16": 780.0, "fp16": 785.0, "fp8": 1380.0,
              "fp8-fast": 1500.0}


@dataclass
class SimulatedCard:
    name: str = "NVIDIA H100 80GB HBM3"
    major: int = 9
    minor: int = 0
    total_memory: int = 80 * 2**30
    multi_processor_count: int = 132
    uuid: str = "5b8e6a52-0000-4000-8000-000000000000"
    rates: dict[str, float] = field(default_factory=lambda: dict(H100_RATES))
    # A cold card: its clock starts at half speed and reaches full speed this long (wall time) after its first
    # kernel. Wall time, because the probe plans its warm-up and batches by wall time, as it must on a GPU.
    # Off by default: on this busy CPU the wall time of the real matmuls varies too much for the warm-up rule to
    # be tested here; tests/test_probe.py tests it on a device whose timer ramps batch by batch.
    ramp_s: float = 0.0
    noise: float = 0.005  # relative standard deviation of one call's time
    # An unsteady machine: format -> factor by which every other timed batch of that format runs slower (a
    # neighbour's job, a clock that will not settle), so its batches spread by factor - 1 whatever their length.
    unsteady: dict[str, float] = field(default_factory=dict)
    unsteady_batches: int = 0
    last_format: str = ""
    clock_s: float = 0.0
    calls: int = 0
    first_kernel: float | None = None
    by_format: dict[str, int] = field(default_factory=dict)

    def run(self, fmt: str, flop: float, rng: random.Random) -> None:
        if self.first_kernel is None:
            self.first_kernel = time.perf_counter()
        warm = 1.0 if self.ramp_s <= 0 else min(1.0, (time.perf_counter() - self.first_kernel) / self.ramp_s)
        speed = 0.5 + 0.5 * warm
        self.clock_s += flop / (self.rates[fmt] * 1e12 * speed) * (1.0 + rng.gauss(0.0, self.noise))
        self.calls += 1
        self.by_format[fmt] = self.by_format.get(fmt, 0) + 1
        self.last_format = fmt

    def batch_factor(self) -> float:
        """How much slower the batch that just ended ran than the kernels' own time (1.0 on a steady card)."""
        factor = self.unsteady.get(self.last_format)
        if factor is None:
            return 1.0
        self.unsteady_batches += 1
        return factor if self.unsteady_batches % 2 else 1.0


class _Event:
    def __init__(self, module: SimulatedCuda, enable_timing: bool = False) -> None:
        assert enable_timing, "the probe must ask for timing events"
        self.module = module
        self.at: float | None = None

    def record(self, stream: Any = None) -> None:
        self.at = self.module.cards[self.module.current].clock_s

    def synchronize(self) -> None:
        assert self.at is not None, "synchronize() on an event never recorded"

    def elapsed_time(self, end: _Event) -> float:
        assert self.at is not None and end.at is not None
        factor = self.module.cards[self.module.current].batch_factor()
        return (end.at - self.at) * factor * 1e3  # milliseconds, like torch.cuda.Event


class SimulatedCuda:
    """Stands in for the torch.cuda module."""

    def __init__(self, cards: list[SimulatedCard]) -> None:
        self.cards = cards
        self.current = 0
        self.synchronized = 0

    def is_available(self) -> bool:
        return bool(self.cards)

    def device_count(self) -> int:
        return len(self.cards)

    def get_device_properties(self, index: int) -> SimulatedCard:
        return self.cards[index]

    def synchronize(self, device: Any = None) -> None:
        self.synchronized += 1

    @contextmanager
    def device(self, index: int) -> Iterator[None]:
        previous, self.current = self.current, index
        try:
            yield
        finally:
            self.current = previous

    def Event(self, enable_timing: bool = False) -> _Event:  # noqa: N802 - torch.cuda.Event is a class
        return _Event(self, enable_timing)

    def api(self) -> CudaApi:
        return CudaApi(self, lambda index: torch.device("cpu"))


class SimulatedKernels(TorchFunctionMode):
    """Charges every matmul to the current simulated card's clock, then runs it for real on the CPU."""

    def __init__(self, cuda: SimulatedCuda, seed: int = 0) -> None:
        super().__init__()
        self.cuda = cuda
        self.rng = random.Random(seed)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        fmt = self._format(func, args, kwargs)
        if fmt is not None:
            a, b = args[0], args[1]
            flop = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
            self.cuda.cards[self.cuda.current].run(fmt, flop, self.rng)
            if fmt == "tf32":  # TF32 tensor cores read only the first 10 bits of each input's mantissa
                args = (_tf32(args[0]), _tf32(args[1]), *args[2:])
        return func(*args, **kwargs)

    @staticmethod
    def _format(func: Any, args: Any, kwargs: Any) -> str | None:
        name = getattr(func, "__name__", "")
        if name == "_scaled_mm":
            return "fp8-fast" if kwargs.get("use_fast_accum") else "fp8"
        if name == "_scaled_mm_v2":  # what torch.nn.functional.scaled_mm calls, all arguments positional
            fast = args[11] if len(args) > 11 else kwargs.get("use_fast_accum", False)
            return "fp8-fast" if fast else "fp8"
        if name in ("mm", "matmul", "__matmul__") and len(args) >= 2 and getattr(args[0], "dim", lambda: 0)() == 2:
            dtype = args[0].dtype
            if dtype == torch.float64:
                return "fp64"
            if dtype == torch.float32:
                return "fp32" if torch.get_float32_matmul_precision() == "highest" else "tf32"
            return {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype)
        return None


def _tf32(tensor: Any) -> Any:
    with torch._C.DisableTorchFunction():
        return (tensor.view(torch.int32) & ~0x1FFF).view(torch.float32)


@contextmanager
def simulated_gpus(monkeypatch: Any, *cards: SimulatedCard) -> Iterator[SimulatedCuda]:
    """Every probe call inside sees these cards instead of torch.cuda."""
    cuda = SimulatedCuda(list(cards) or [SimulatedCard()])
    monkeypatch.setattr(CudaApi, "of", classmethod(lambda cls, _torch: cuda.api()))
    with SimulatedKernels(cuda):
        yield cuda


NVIDIA_SMI = """#!/bin/sh
# Stand-in nvidia-smi: answers --query-compute-apps and --query-gpu with canned readings.
case "$1" in
  --query-compute-apps=*) printf '%s\\n' "{apps}" ;;
  --query-gpu=*clocks_event_reasons*) {event_reasons} ;;
  --query-gpu=*) printf '%s\\n' "{gpu}" ;;
esac
"""


def install_nvidia_smi(folder: Path, monkeypatch: Any, *, sm: str = "1980", sm_max: str = "1980",
                       power: str = "520.4", limit: str = "700.00", default_limit: str = "700.00",
                       temperature: str = "61", reasons: str = "0x0000000000000000", apps: str = "",
                       event_reasons: bool = True) -> Path:
    """Put a stand-in nvidia-smi first on PATH. `event_reasons=False` acts like a driver older than R535, which
    rejects clocks_event_reasons (the probe must fall back to clocks_throttle_reasons)."""
    gpu = ", ".join((sm, sm_max, power, limit, default_limit, temperature, reasons))
    script = folder / "nvidia-smi"
    script.write_text(NVIDIA_SMI.format(
        apps=apps, gpu=gpu,
        event_reasons=f"printf '%s\\n' \"{gpu}\"" if event_reasons
        else "echo 'Field \"clocks_event_reasons.active\" is not a valid field to query.' >&2; exit 2"))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{folder}:{__import__('os').environ.get('PATH', '')}")
    return script
