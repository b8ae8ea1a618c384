"""What the driver says while the probe runs: SM clock, throttle reasons, power, other processes.

Sampled from `nvidia-smi --query-gpu` on a background thread every SAMPLE_INTERVAL_S, so a slow figure can be
explained ("the SM clock ran at 1,410 of 1,980 MHz; reasons: sw_power_cap"). Never required: without
nvidia-smi (ROCm, containers without the tool, a CPU) the probe runs and says that it has no readings.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import threading
from dataclasses import dataclass

from precisionlint.advise.probe.results import Telemetry

SAMPLE_INTERVAL_S = 0.5
QUERY_TIMEOUT_S = 5.0
STOP_WAIT_S = 0.3

# NVML's nvmlClocksEventReasons bits (nvml.h), named as nvidia-smi names the per-reason fields.
THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# The driver renamed "clocks_throttle_reasons" to "clocks_event_reasons" (R535); older drivers know only the first.
_REASON_FIELDS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")
_GPU_FIELDS = "clocks.sm,clocks.max.sm,power.draw,enforced.power.limit,power.default_limit,temperature.gpu"


@dataclass(frozen=True)
class Sample:
    sm_clock_mhz: float | None
    sm_clock_max_mhz: float | None
    power_draw_w: float | None
    power_limit_w: float | None
    power_default_limit_w: float | None
    temperature_c: float | None
    reasons: int | None


def _number(text: str) -> float | None:
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def parse_gpu_line(line: str) -> Sample | None:
    """One line of `--query-gpu=<_GPU_FIELDS>,<reasons> --format=csv,noheader,nounits`."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 7:
        return None
    reasons: int | None
    try:
        reasons = int(parts[6], 16)
    except ValueError:
        reasons = None
    clock, clock_max, power, limit, default_limit, temperature = (_number(p) for p in parts[:6])
    return Sample(clock, clock_max, power, limit, default_limit, temperature, reasons)


def reason_names(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in THROTTLE_BITS.items() if mask & bit)


def parse_processes(output: str, uuid: str | None, own_pid: int) -> tuple[tuple[int, str, float | None], ...]:
    """Compute processes on the GPU `uuid` other than `own_pid`, from
    `--query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits`."""
    found = []
    for line in output.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[1].isdigit():
            continue
        if uuid is not None and parts[0] != uuid:
            continue
        pid = int(parts[1])
        if pid != own_pid:
            found.append((pid, parts[2], _number(parts[3])))
    return tuple(found)


def summarise(samples: list[Sample], processes: tuple[tuple[int, str, float | None], ...]) -> Telemetry:
    """The samples as one Telemetry: the median SM clock under load (idle samples left out), the highest power and
    temperature, every non-idle throttle reason seen."""
    busy = [s for s in samples if s.reasons is None or not s.reasons & 0x1] or samples
    clocks = [s.sm_clock_mhz for s in busy if s.sm_clock_mhz is not None]
    mask = 0
    for s in busy:
        mask |= s.reasons or 0

    def highest(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    def last(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return known[-1] if known else None

    return Telemetry(
        source="nvidia-smi",
        samples=len(samples),
        sm_clock_mhz=statistics.median(clocks) if clocks else None,
        sm_clock_max_mhz=last([s.sm_clock_max_mhz for s in samples]),
        power_draw_w=highest([s.power_draw_w for s in busy]),
        power_limit_w=last([s.power_limit_w for s in samples]),
        power_default_limit_w=last([s.power_default_limit_w for s in samples]),
        temperature_c=highest([s.temperature_c for s in busy]),
        throttle_reasons=tuple(r for r in reason_names(mask) if r != "gpu_idle"),
        other_processes=processes,
    )


class Monitor:
    """Samples one GPU with nvidia-smi until stopped. `start()` returns at once; `stop()` returns the Telemetry,
    or None when nothing could be read."""

    def __init__(self, target: str, uuid: str | None, executable: str | None = None) -> None:
        self.target = target  # what nvidia-smi -i takes: the UUID where known, else the index
        self.uuid = uuid
        self.exe = executable or shutil.which("nvidia-smi")
        self.samples: list[Sample] = []
        self.processes: tuple[tuple[int, str, float | None], ...] = ()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def available(self) -> bool:
        return self.exe is not None

    def _run(self, *args: str) -> str | None:
        assert self.exe is not None
        try:
            done = subprocess.run([self.exe, *args], capture_output=True, text=True, timeout=QUERY_TIMEOUT_S,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def _loop(self) -> None:
        # Other processes first, before this process has created its own CUDA context on the GPU.
        apps = self._run("--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
                         "--format=csv,noheader,nounits")
        if apps is not None:
            self.processes = parse_processes(apps, self.uuid, os.getpid())
        fields = None
        for reason_field in _REASON_FIELDS:
            out = self._run(f"--query-gpu={_GPU_FIELDS},{reason_field}", "--format=csv,noheader,nounits",
                            "-i", self.target)
            if out is not None:
                fields = reason_field
                self._keep(out)
                break
        while fields is not None and not self._stop.wait(SAMPLE_INTERVAL_S):
            out = self._run(f"--query-gpu={_GPU_FIELDS},{fields}", "--format=csv,noheader,nounits",
                            "-i", self.target)
            if out is None:
                break
            self._keep(out)

    def _keep(self, output: str) -> None:
        for line in output.splitlines():
            sample = parse_gpu_line(line)
            if sample is not None:
                self.samples.append(sample)

    def start(self) -> None:
        if self.exe is None:
            return
        self._thread = threading.Thread(target=self._loop, name="precisionlint-gpu-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> Telemetry | None:
        if self._thread is None:
            return None
        self._stop.set()
        # Do not wait for a query still in flight (nvidia-smi can take a second): it would eat the time budget.
        # The thread is a daemon; whatever it sampled so far is the reading.
        self._thread.join(STOP_WAIT_S)
        samples = list(self.samples)
        if not samples and not self.processes:
            return None
        return summarise(samples, self.processes)
