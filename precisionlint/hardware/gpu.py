"""One accelerator model (`Gpu`), the formats it is judged on, and the error for a name that matches no card.

Capabilities follow the hardware, not what PyTorch will agree to run. `torch.cuda.is_bf16_supported()` is True
on a T4 or a V100 since PyTorch ~2.3 (it counts emulation); native bf16 and TF32 tensor-core math need compute
capability >= 8.0, FP8 tensor cores >= 8.9 (FACTS.md, NVIDIA's CUDA GPUs table).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from precisionlint.core.records import FrozenRecord

NVIDIA = "nvidia"
AMD = "amd"

FORMATS = ("fp32", "tf32", "fp16", "bf16", "fp8")


# Plain classes rather than dataclasses: a `check` with target GPUs imports this table, and importing dataclasses
# costs it several milliseconds (precisionlint/core/records.py has the numbers).


class Gpu(FrozenRecord):
    """One accelerator model.

    compute_capability  NVIDIA (major, minor); None for AMD, whose ISA is `gfx_arch` instead.
    bf16 / tf32 / fp8   native tensor-core (matrix-core) support, not emulation.
    peak_tflops         dense peak per format in FORMATS; a missing key means "no figure" (unknown card) or
                        "no such hardware path" (no "bf16" on a V100: it is emulated).
    source              where the figures come from (datasheet or whitepaper URL).
    """

    __slots__ = ("name", "vendor", "architecture", "compute_capability", "bf16", "tf32", "fp8", "peak_tflops",
                 "source", "gfx_arch", "memory_gb", "in_table")
    _fields = __slots__

    def __init__(
        self,
        name: str,
        vendor: str,
        architecture: str,
        compute_capability: tuple[int, int] | None,
        bf16: bool,
        tf32: bool,
        fp8: bool,
        peak_tflops: dict[str, float] | None = None,
        source: str = "",
        gfx_arch: str | None = None,
        memory_gb: float | None = None,
        in_table: bool = True,
    ) -> None:
        self.name = name
        self.vendor = vendor
        self.architecture = architecture
        self.compute_capability = compute_capability
        self.bf16 = bf16
        self.tf32 = tf32
        self.fp8 = fp8
        self.peak_tflops: dict[str, float] = {} if peak_tflops is None else peak_tflops
        self.source = source
        self.gfx_arch = gfx_arch
        self.memory_gb = memory_gb
        self.in_table = in_table

    def _values(self) -> tuple[Any, ...]:
        # Equality and hash leave the peak figures out (a dict; two entries of one card are the same card).
        return (self.name, self.vendor, self.architecture, self.compute_capability, self.bf16, self.tf32, self.fp8,
                self.source, self.gfx_arch, self.memory_gb, self.in_table)

    def replace(self, **changes: Any) -> Gpu:
        """A copy with some fields changed (dataclasses.replace)."""
        return Gpu(**{**{name: getattr(self, name) for name in self._fields}, **changes})

    @property
    def cc_text(self) -> str:
        if self.compute_capability is not None:
            return f"{self.compute_capability[0]}.{self.compute_capability[1]}"
        return self.gfx_arch or "?"

    def speedup(self, fmt: str, over: str = "fp32") -> float | None:
        """Peak ratio of `fmt` over `over` from the table, or None when either figure is missing."""
        a, b = self.peak_tflops.get(fmt), self.peak_tflops.get(over)
        if not a or not b:
            return None
        return a / b

    @property
    def fast_fp16(self) -> bool:
        """fp16 math clearly faster than fp32 (tensor cores or packed half2), so fp16 AMP is worth it."""
        ratio = self.speedup("fp16")
        if ratio is not None:
            return ratio >= 1.5
        cc = self.compute_capability
        if cc is None:
            return self.bf16  # AMD matrix cores: every gfx in the table with bf16 also has fast fp16
        # Pascal GP100 (6.0) and Jetson (6.2) have 2x half2; GP10x consumer cards (6.1) run fp16 at 1/64 rate.
        return cc >= (7, 0) or cc in ((6, 0), (6, 2))

    def describe(self) -> str:
        if self.compute_capability and self.name == f"compute capability {self.cc_text}":
            return f"{self.name} ({self.architecture})"  # not "compute capability 8.9 (..., cc 8.9)"
        return f"{self.name} ({self.architecture}, {'cc ' if self.compute_capability else ''}{self.cc_text})"


class UnknownGpuError(ValueError):
    """A GPU name that matches no table entry. The CLI turns it into a usage error (exit 2)."""

    def __init__(self, name: str, suggestions: Sequence[str], reason: str | None = None) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        if reason is not None:  # a well-formed compute capability or ISA that no card has
            super().__init__(f"{name!r}: {reason} (a card of your own can be described in custom-gpus in the "
                             "configuration)")
            return
        hint = f"; did you mean {', '.join(repr(s) for s in self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown GPU {name!r}{hint} (`precisionlint advise --list-gpus` lists the known GPUs; "
                         "any card can be named by its compute capability, as cc8.9 or sm_89, or described in "
                         "custom-gpus in the configuration)")


def fleet_names(gpus: Iterable[Gpu]) -> str:
    """'A100 SXM and V100 SXM2' for messages; duplicates removed, order kept."""
    names: list[str] = []
    for gpu in gpus:
        if gpu.name not in names:
            names.append(gpu.name)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]
