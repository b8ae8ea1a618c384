"""How exact each format's matmul is: the product against a float64 product of the same data.

The measure is the one in PyTorch's note on TF32 (docs/source/notes/cuda.rst): with ab_full the float64 product,
error = (ab - ab_full).abs().max() and relative_error = error / ab_full.abs().mean(). On an A100 with
10240-square randn inputs the note reports 0.0022 for TF32 and 0.000039 for float32.

Also here: what fp16 does to small gradient values with and without loss scaling.
"""

from __future__ import annotations

import math
from typing import Any

from precisionlint.advise.probe.device import Backend
from precisionlint.advise.probe.kernels import (
    FP8_FORMATS,
    fp8_operands,
    half_dtype,
    matmul_precision,
    precision_for,
    scaled_mm,
)
from precisionlint.advise.probe.results import LossScaling, NumericCheck

# Loss-scaling check: gradient-like values spread evenly in log scale over this range of magnitudes.
GRAD_LOW, GRAD_HIGH = 1e-10, 1e-1
LOSS_SCALE = 2.0**16  # GradScaler's init_scale
GRAD_SAMPLES = 1 << 16  # enough for fractions to +-0.5%; a million took most of a second on a busy CPU

_EXPECTED_FAILURES = (RuntimeError, TypeError, NotImplementedError, AttributeError)


def check_formats(backend: Backend, formats: list[str], size: int, seed: int = 1234) -> list[NumericCheck]:
    """One NumericCheck per format (fp16 added when missing: it is the format loss scaling is about). A format
    this device or build cannot run is left out; the timing reports why."""
    torch = backend.torch
    dev = backend.tensor_device
    generator = torch.Generator(device=dev).manual_seed(seed)
    a_full = torch.randn(size, size, device=dev, dtype=torch.float64, generator=generator)
    b_full = torch.randn(size, size, device=dev, dtype=torch.float64, generator=generator)
    ab_full = a_full @ b_full
    mean = float(ab_full.abs().mean())
    a, b = a_full.float(), b_full.float()
    checks = []
    with backend.active():
        for fmt in [*formats, *(["fp16"] if "fp16" not in formats else [])]:
            try:
                with matmul_precision(torch, precision_for(fmt)):
                    if fmt in ("fp32", "tf32"):
                        product = a @ b
                    elif fmt in FP8_FORMATS:
                        a8, b8, sa, sb = fp8_operands(torch, a, b, backend.info)
                        product = scaled_mm(torch, a8, b8, sa, sb, fmt == "fp8-fast")
                    else:
                        dtype = half_dtype(torch, fmt)
                        product = a.to(dtype) @ b.to(dtype)
                error = float((product.double() - ab_full).abs().max())
            except _EXPECTED_FAILURES:
                continue  # e.g. fp16 matmul on an old CPU build
            checks.append(NumericCheck(fmt, size, error / mean if mean else math.inf, error))
    return checks


def loss_scaling_check(torch: Any, samples: int = GRAD_SAMPLES) -> LossScaling:
    """The fraction of small gradient values fp16 flushes to zero, unscaled and scaled by 2**16 first."""
    generator = torch.Generator().manual_seed(4321)
    exponents = torch.empty(samples, dtype=torch.float64).uniform_(
        math.log10(GRAD_LOW), math.log10(GRAD_HIGH), generator=generator)
    signs = torch.randint(0, 2, (samples,), generator=generator).double() * 2 - 1
    grads = (signs * torch.pow(10.0, exponents)).float()
    unscaled = grads.half()
    scaled = (grads * LOSS_SCALE).half()
    return LossScaling(
        samples=samples,
        low=GRAD_LOW,
        high=GRAD_HIGH,
        scale=LOSS_SCALE,
        underflow_unscaled=float((unscaled == 0).double().mean()),
        underflow_scaled=float((scaled == 0).double().mean()),
        overflow_scaled=float(torch.isinf(scaled).double().mean()),
    )
