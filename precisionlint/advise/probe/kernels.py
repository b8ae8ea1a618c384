"""The matmul of each format, as the probe times and checks it.

fp32 is float32 with TF32 off, tf32 the same matmul with torch.set_float32_matmul_precision("high"), bf16 and
fp16 plain 16-bit matmuls (float32 accumulation in cuBLAS), fp8 an e4m3 matmul with per-tensor scales through
torch.nn.functional.scaled_mm where this torch has it, torch._scaled_mm otherwise, with and without Hopper's
fast accumulation ("fp8-fast": partial sums kept at lower precision, faster and less exact).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from precisionlint.advise.probe.device import scaled_mm_api
from precisionlint.advise.probe.results import DeviceInfo

FP8_FORMATS = ("fp8", "fp8-fast")
FP8_MULTIPLE = 16  # torch._scaled_mm / scaled_mm reject dimensions that are not multiples of 16


def formats_for(info: DeviceInfo) -> list[str]:
    """The formats worth measuring on this device, in the order they are measured."""
    if not info.is_gpu:
        return ["fp32", "bf16"]
    formats = ["fp32"]
    if info.tf32:
        formats.append("tf32")
    # bf16 even without native support: the measurement shows the emulation cost. Emulated bf16 can be slow
    # enough to eat the budget, so there it goes after fp16, the format that matters on such a GPU.
    formats += ["bf16", "fp16"] if info.bf16 else ["fp16", "bf16"]
    if info.fp8:
        formats.append("fp8")
        if info.compute_capability is not None:  # fast accumulation is a cuBLASLt (NVIDIA) option
            formats.append("fp8-fast")
    return formats


def precision_for(fmt: str) -> str:
    # fp32 is measured with TF32 off; tf32 with it on. 16-bit and fp8 formats do not read the setting.
    return "high" if fmt == "tf32" else "highest"


@contextmanager
def matmul_precision(torch: Any, value: str) -> Iterator[None]:
    """torch.set_float32_matmul_precision for the duration, restored afterwards (it is process-global)."""
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(value)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(old)


def api_for(torch: Any, fmt: str) -> str:
    if fmt in FP8_FORMATS:
        return scaled_mm_api(torch) or ""
    return "torch.mm"


def fp8_dtype(torch: Any, info: DeviceInfo) -> Any:
    if info.gcn_arch and info.gcn_arch.startswith("gfx94"):
        return torch.float8_e4m3fnuz  # MI300's fp8 has no negative zero and a different bias
    return torch.float8_e4m3fn


def fp8_operands(torch: Any, a: Any, b: Any, info: DeviceInfo) -> tuple[Any, Any, Any, Any]:
    """Per-tensor scaled e4m3 operands: a row-major, b column-major (cuBLASLt's layout), and the float32 scalar
    scales that decode them (a == a8 * scale_a, up to rounding)."""
    dtype = fp8_dtype(torch, info)
    fmax = float(torch.finfo(dtype).max)
    scale_a = (a.abs().max().float() / fmax).clamp(min=1e-12)
    scale_b = (b.abs().max().float() / fmax).clamp(min=1e-12)
    a8 = (a.float() / scale_a).to(dtype)
    b8 = (b.float() / scale_b).to(dtype).t().contiguous().t()
    return a8, b8, scale_a, scale_b


def scaled_mm(torch: Any, a8: Any, b8: Any, scale_a: Any, scale_b: Any, fast: bool) -> Any:
    """a8 @ b8 with per-tensor scales, bf16 out, through the public API where this torch has it."""
    api = scaled_mm_api(torch)
    if api == "torch.nn.functional.scaled_mm":
        functional = torch.nn.functional
        tensorwise = functional.ScalingType.TensorWise
        return functional.scaled_mm(a8, b8, scale_a, tensorwise, scale_b, tensorwise,
                                    output_dtype=torch.bfloat16, use_fast_accum=fast)
    if api == "torch._scaled_mm":
        out = torch._scaled_mm(a8, b8, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
                               use_fast_accum=fast)
        return out[0] if isinstance(out, tuple) else out  # torch < 2.5 returned (out, amax)
    raise RuntimeError("this torch build has no fp8 matmul (torch.nn.functional.scaled_mm or torch._scaled_mm)")


def half_dtype(torch: Any, fmt: str) -> Any:
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[fmt]


def matmul_fn(torch: Any, fmt: str, a: Any, b: Any, info: DeviceInfo) -> Callable[[], Any]:
    """A call that runs one (M, K) x (K, N) matmul of `fmt` on operands made from `a` and `b` (any float dtype);
    conversions happen here, once, not inside the timed call."""
    if fmt in ("fp32", "tf32"):
        a32, b32 = a.float(), b.float()
        out = torch.empty(a32.shape[0], b32.shape[1], dtype=torch.float32, device=a32.device)
        return lambda: torch.mm(a32, b32, out=out)
    if fmt in FP8_FORMATS:
        if not info.fp8_kernel:
            raise RuntimeError("this torch build has no fp8 matmul (torch.nn.functional.scaled_mm or "
                               "torch._scaled_mm)")
        a8, b8, sa, sb = fp8_operands(torch, a, b, info)
        fast = fmt == "fp8-fast"
        return lambda: scaled_mm(torch, a8, b8, sa, sb, fast)
    dtype = half_dtype(torch, fmt)
    ah, bh = a.to(dtype), b.to(dtype)
    out = torch.empty(ah.shape[0], bh.shape[1], dtype=dtype, device=ah.device)
    return lambda: torch.mm(ah, bh, out=out)
