"""This machine's GPUs as `--gpu auto` means them: nvidia-smi first, then the devices PyTorch sees.

The hardware layer asks nvidia-smi alone, since it must not reach the probe (the only package that imports
torch); this module, above both, hands it the probe's device query for machines without nvidia-smi (ROCm, or a
container without the tool). torch is imported only when nvidia-smi gave no answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from precisionlint.hardware.detect import detect_local
from precisionlint.hardware.gpu import Gpu

if TYPE_CHECKING:  # the records import dataclasses, which a `check --gpu` never pays for
    from precisionlint.advise.probe.results import DeviceInfo


def local_gpus() -> tuple[Gpu, ...]:
    """The GPUs of this machine, one per device; empty without one (or without nvidia-smi and torch)."""
    return detect_local(torch_devices)


def torch_devices() -> tuple[DeviceInfo, ...]:
    """The devices PyTorch sees, through the probe; none where torch cannot be imported."""
    from precisionlint.advise.probe import device

    try:
        return device.query_devices()
    except device.ProbeUnavailable:
        return ()
