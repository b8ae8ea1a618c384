"""This machine's GPUs: nvidia-smi's list, and the card for a device PyTorch described.

This layer never imports torch or the probe: `detect_local()` asks nvidia-smi, and asks PyTorch only through a
function its caller passes in (precisionlint.advise.local_gpus passes the probe's device query).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterable
from typing import Protocol

from precisionlint.hardware.capability import gpu_from_capability, parse_cc
from precisionlint.hardware.gpu import Gpu
from precisionlint.hardware.names import find_gpu


class DeviceDescription(Protocol):
    """What a device query reports of one device (the probe's DeviceInfo is one)."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def compute_capability(self) -> tuple[int, int] | None: ...
    @property
    def gcn_arch(self) -> str | None: ...
    @property
    def memory_bytes(self) -> int | None: ...


def device_from_description(desc: DeviceDescription) -> Gpu:
    """The Gpu for a device the probe queried: the table entry when the name is known, else one built from
    its compute capability (or gfx ISA). The driver's name is kept so that messages show what the user sees."""
    found = find_gpu(desc.name)
    cc = desc.compute_capability
    if found is not None and (found.compute_capability is None or cc is None or found.compute_capability == cc):
        return found.replace(memory_gb=round(desc.memory_bytes / 2**30, 1)) if desc.memory_bytes else found
    memory = round(desc.memory_bytes / 2**30, 1) if desc.memory_bytes else None
    return gpu_from_capability(desc.name, cc, desc.gcn_arch, memory)


def parse_nvidia_smi(output: str) -> tuple[Gpu, ...]:
    """GPUs from `nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader` (or name only) output."""
    gpus: list[Gpu] = []
    for line in output.splitlines():
        if not line.strip():
            continue
        name, _, cap = line.partition(",")
        name = name.strip()
        cc = parse_cc(cap) if cap else None
        gpu = find_gpu(name)
        if gpu is None or (cc is not None and gpu.compute_capability not in (None, cc)):
            gpu = gpu_from_capability(name, cc)
        gpus.append(gpu)
    return tuple(gpus)


def _nvidia_smi() -> tuple[Gpu, ...] | None:
    """GPUs nvidia-smi sees; None when it is not installed or fails (then PyTorch is asked instead)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    # compute_cap is a field since driver 510; older drivers reject it, so retry with the name only.
    for fields in ("name,compute_cap", "name"):
        try:
            done = subprocess.run([exe, f"--query-gpu={fields}", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=15, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode == 0:
            return parse_nvidia_smi(done.stdout)
    return None


def detect_local(ask_torch: Callable[[], Iterable[DeviceDescription]] | None = None) -> tuple[Gpu, ...]:
    """The GPUs of this machine, one per device (duplicates kept: 8 A100s are 8 entries). Empty without one.

    nvidia-smi first; where it is missing or fails (a ROCm machine, a container without the tool), the devices
    `ask_torch` reports, when the caller passes it (it may import torch, which this layer must not)."""
    found = _nvidia_smi()
    if found is not None:
        return found
    if ask_torch is None:
        return ()
    return tuple(device_from_description(d) for d in ask_torch() if d.kind == "cuda")
