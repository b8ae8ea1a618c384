"""The devices the probe can measure, and the one interface it measures them through.

A `Backend` is one device: where its tensors live, how to wait for it, and how to time a batch of calls. The
CUDA backend reaches the GPU only through a `CudaApi`: torch.cuda itself in real runs, a simulated GPU in the
tests (this machine has none), so the same query and timing code runs in both.
"""

from __future__ import annotations

import os
import platform
import time
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from precisionlint.advise.probe.results import DeviceInfo
from precisionlint.hardware.capability import capabilities

INSTALL_HINT = ("advise --probe needs PyTorch, which is not installed: from a clone of precisionlint, "
                "python3 -m pip install '.[probe]' (or install torch itself)")


class ProbeUnavailable(RuntimeError):
    """torch is not installed (or cannot be imported): the probe cannot run."""


# What torch says on import where NumPy is not installed: torch/csrc/utils/tensor_numpy.cpp warns the first time a
# tensor-to-NumPy conversion method is built, which torch._subclasses.functional_tensor does while `import torch`
# runs. NumPy is optional for torch (its wheels do not require it) and the probe never converts a tensor to NumPy,
# so the warning tells a probe user nothing; it is ignored for the import alone and every other warning still shows.
_NO_NUMPY_WARNING = r"Failed to initialize NumPy"


def import_torch() -> Any:
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NO_NUMPY_WARNING, category=UserWarning)
            import torch
    except ImportError as exc:  # also what a broken install or a blocked import raises
        raise ProbeUnavailable(INSTALL_HINT) from exc
    return torch


# ---------------------------------------------------------------------------------------------------------------
# The CPU
# ---------------------------------------------------------------------------------------------------------------

def _cpu_flags() -> tuple[str, ...]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return tuple(sorted(set(line.split(":", 1)[1].split())))
    except OSError:
        pass
    return ()


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def cpu_native_bf16(flags: tuple[str, ...]) -> bool:
    """bf16 dot-product instructions (AVX512-BF16 or AMX-BF16): bf16 matmuls can beat fp32 on this CPU."""
    return "amx_bf16" in flags or "avx512_bf16" in flags


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def describe_cpu(torch_version: str = "") -> DeviceInfo:
    flags = _cpu_flags()
    return DeviceInfo(
        kind="cpu",
        name=_cpu_name(),
        memory_bytes=_physical_memory(),
        multiprocessors=os.cpu_count(),
        torch_version=torch_version,
        bf16=cpu_native_bf16(flags),
        cpu_flags=tuple(f for f in flags if "bf16" in f or f.startswith(("amx", "avx512f", "avx2"))),
    )


# ---------------------------------------------------------------------------------------------------------------
# GPUs
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CudaApi:
    """What the probe needs of torch.cuda: `module` has is_available, device_count, get_device_properties,
    synchronize, device (a context manager) and Event(enable_timing=True); `tensor_device(i)` is where device
    i's tensors are allocated. The real one is `CudaApi.of(torch)`."""

    module: Any
    tensor_device: Callable[[int], Any]

    @classmethod
    def of(cls, torch: Any) -> CudaApi:
        return cls(torch.cuda, lambda index: torch.device("cuda", index))


def scaled_mm_api(torch: Any) -> str | None:
    """The fp8 matmul this torch offers: the public torch.nn.functional.scaled_mm (recent releases) or the
    private torch._scaled_mm (2.1+), or None."""
    if not hasattr(torch, "float8_e4m3fn"):
        return None
    functional = getattr(getattr(torch, "nn", None), "functional", None)
    if functional is not None and hasattr(functional, "scaled_mm") and hasattr(functional, "ScalingType"):
        return "torch.nn.functional.scaled_mm"
    if hasattr(torch, "_scaled_mm"):
        return "torch._scaled_mm"
    return None


def describe_gpus(torch: Any, cuda: CudaApi) -> tuple[DeviceInfo, ...]:
    """One DeviceInfo per device `cuda` sees (none when it sees none)."""
    if not cuda.module.is_available():
        return ()
    version = str(torch.__version__)
    hip = getattr(torch.version, "hip", None)
    fp8_kernel = scaled_mm_api(torch) is not None
    devices = []
    for index in range(int(cuda.module.device_count())):
        props = cuda.module.get_device_properties(index)
        cc = (int(props.major), int(props.minor))
        gcn = getattr(props, "gcnArchName", None) if hip else None
        gcn = gcn.split(":", 1)[0] if gcn else None
        bf16, tf32, fp8 = capabilities(None if gcn else cc, gcn)
        uuid = getattr(props, "uuid", None)
        uuid = None if uuid is None or hip else str(uuid) if str(uuid).startswith("GPU-") else f"GPU-{uuid}"
        devices.append(
            DeviceInfo(
                kind="cuda",
                name=str(props.name),
                compute_capability=None if gcn else cc,
                gcn_arch=gcn,
                memory_bytes=int(props.total_memory),
                multiprocessors=int(props.multi_processor_count),
                torch_version=version,
                cuda_version=getattr(torch.version, "cuda", None),
                hip_version=hip,
                bf16=bf16,
                tf32=tf32,
                fp8=fp8,
                fp8_kernel=fp8_kernel,
                index=index,
                uuid=uuid,
            )
        )
    return tuple(devices)


def query_devices(cuda: CudaApi | None = None) -> tuple[DeviceInfo, ...]:
    """Every CUDA/ROCm device torch sees; the CPU alone when there is none. Raises ProbeUnavailable."""
    torch = import_torch()
    gpus = describe_gpus(torch, cuda or CudaApi.of(torch))
    return gpus or (describe_cpu(str(torch.__version__)),)


# ---------------------------------------------------------------------------------------------------------------
# Backends: one device, its tensors and its timer
# ---------------------------------------------------------------------------------------------------------------

class Backend:
    """The CPU: tensors on the host, wall-clock timing (the call returns when the work is done)."""

    def __init__(self, torch: Any, info: DeviceInfo) -> None:
        self.torch = torch
        self.info = info
        self.tensor_device = torch.device("cpu")

    def synchronize(self) -> None:
        """Wait until the device has finished the work queued so far."""

    def active(self) -> AbstractContextManager[Any]:
        """Make this device the current one for the duration (events and kernels go to it)."""
        return nullcontext()

    def time_batch(self, fn: Callable[[], Any], inner: int) -> float:
        """Seconds per call of `inner` back-to-back calls of `fn`, timed as one batch."""
        began = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - began) / inner


class CudaBackend(Backend):
    """One CUDA (or ROCm) device. A batch is timed by one pair of CUDA events around `inner` launches: the
    events measure the kernels on the device's stream, not Python's launch overhead, and a single pair per batch
    keeps the event's own resolution (about half a microsecond) negligible against the batch."""

    def __init__(self, torch: Any, info: DeviceInfo, cuda: CudaApi) -> None:
        super().__init__(torch, info)
        self.cuda = cuda.module
        self.tensor_device = cuda.tensor_device(info.index)

    def synchronize(self) -> None:
        self.cuda.synchronize(self.info.index)

    def active(self) -> AbstractContextManager[Any]:
        return self.cuda.device(self.info.index)  # type: ignore[no-any-return]

    def time_batch(self, fn: Callable[[], Any], inner: int) -> float:
        start = self.cuda.Event(enable_timing=True)
        end = self.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1e3 / inner  # elapsed_time is in milliseconds


def open_backends(cuda: CudaApi | None = None) -> list[Backend]:
    """A backend per visible GPU, or the CPU's when there is none. Raises ProbeUnavailable without torch."""
    torch = import_torch()
    api = cuda or CudaApi.of(torch)
    gpus = describe_gpus(torch, api)
    if gpus:
        return [CudaBackend(torch, info, api) for info in gpus]
    return [Backend(torch, describe_cpu(str(torch.__version__)))]
