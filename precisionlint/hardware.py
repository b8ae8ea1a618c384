"""What each accelerator can do natively, and how fast: the table behind the hardware rules and `advise`.

Capabilities follow the hardware, not what PyTorch will agree to run. `torch.cuda.is_bf16_supported()` is True
on a T4 or a V100 since PyTorch ~2.3 (it counts emulation); native bf16 and TF32 tensor-core math need compute
capability >= 8.0, FP8 tensor cores >= 8.9 (FACTS.md, NVIDIA's CUDA GPUs table).

Peak figures are dense (no 2:4 sparsity) TFLOP/s with float32 accumulation, the mode PyTorch uses for
fp16/bf16 matmuls, taken from each product's datasheet or architecture whitepaper (`Gpu.source`).
Datasheets that print only sparse figures (marked *) are halved. GeForce cards run fp16/bf16 tensor math with
fp32 accumulation at half the fp16-accumulate rate, so their figures here are the fp32-accumulate ones.

This module never imports torch: `detect_local()` asks nvidia-smi first and only falls back to the probe.
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from precisionlint.core.records import FrozenRecord

if TYPE_CHECKING:
    from precisionlint.advise.probe import DeviceInfo

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


# ---------------------------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------------------------

_NV = "nvidia"
_AMD = "amd"

# (Gpu, aliases). An alias is any spelling people or drivers use; it is normalised by _key(), so case,
# vendor words, memory sizes and separators need not be listed. Form factor matters where the figures differ.
_ENTRIES: tuple[tuple[Gpu, tuple[str, ...]], ...] = (
    (Gpu("P100 PCIe", _NV, "Pascal", (6, 0), False, False, False,
         {"fp32": 9.3, "fp16": 18.7},
         "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-PCIe-datasheet.pdf", memory_gb=16),
     ("P100", "P100 PCIe", "Tesla P100-PCIE-16GB", "Tesla P100-PCIE-12GB")),
    (Gpu("P100 SXM2", _NV, "Pascal", (6, 0), False, False, False,
         {"fp32": 10.6, "fp16": 21.2},
         "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-datasheet.pdf", memory_gb=16),
     ("P100 SXM2", "Tesla P100-SXM2-16GB")),
    (Gpu("V100 SXM2", _NV, "Volta", (7, 0), False, False, False,
         {"fp32": 15.7, "fp16": 125.0},
         "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
         memory_gb=32),
     ("V100", "V100 SXM2", "Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB", "V100-SXM3-32GB")),
    (Gpu("V100 PCIe", _NV, "Volta", (7, 0), False, False, False,
         {"fp32": 14.0, "fp16": 112.0},
         "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
         memory_gb=32),
     ("V100 PCIe", "Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB")),
    (Gpu("V100S PCIe", _NV, "Volta", (7, 0), False, False, False,
         {"fp32": 16.4, "fp16": 130.0},
         "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
         memory_gb=32),
     ("V100S", "Tesla V100S-PCIE-32GB")),
    (Gpu("T4", _NV, "Turing", (7, 5), False, False, False,
         {"fp32": 8.1, "fp16": 65.0},
         "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf",
         memory_gb=16),
     ("T4", "Tesla T4")),
    (Gpu("RTX 2080 Ti", _NV, "Turing", (7, 5), False, False, False,
         # Reference clocks; the Founders Edition is 14.2 / 56.9.
         {"fp32": 13.4, "fp16": 53.8},
         "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architecture/"
         "NVIDIA-Turing-Architecture-Whitepaper.pdf (Table 1)", memory_gb=11),
     ("RTX 2080 Ti", "2080 Ti", "NVIDIA GeForce RTX 2080 Ti")),
    (Gpu("A100 SXM", _NV, "Ampere", (8, 0), True, True, False,
         {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0},
         "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
         "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf", memory_gb=80),
     ("A100", "A100 SXM4", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "a100-80gb", "a100-40gb")),
    (Gpu("A100 PCIe", _NV, "Ampere", (8, 0), True, True, False,
         {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0},
         "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
         "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf", memory_gb=80),
     ("A100 PCIe", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe")),
    (Gpu("A30", _NV, "Ampere", (8, 0), True, True, False,
         {"fp32": 10.3, "tf32": 82.0, "fp16": 165.0, "bf16": 165.0},
         "https://www.nvidia.com/content/dam/en-zz/Solutions/data-center/products/a30-gpu/pdf/a30-datasheet.pdf",
         memory_gb=24),
     ("A30", "NVIDIA A30")),
    (Gpu("A10", _NV, "Ampere", (8, 6), True, True, False,
         {"fp32": 31.2, "tf32": 62.5, "fp16": 125.0, "bf16": 125.0},
         "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/datasheet-new/"
         "nvidia-a10-datasheet.pdf", memory_gb=24),
     ("A10", "NVIDIA A10")),
    (Gpu("A10G", _NV, "Ampere", (8, 6), True, True, False,
         # AWS-only part (g5 instances); NVIDIA publishes no datasheet. GeForce-like tensor rates.
         {"fp32": 35.0, "tf32": 35.0, "fp16": 70.0, "bf16": 70.0},
         "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/ (A10G spec table)",
         memory_gb=24),
     ("A10G", "NVIDIA A10G")),
    (Gpu("A40", _NV, "Ampere", (8, 6), True, True, False,
         {"fp32": 37.4, "tf32": 74.8, "fp16": 149.7, "bf16": 149.7},
         "https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf", memory_gb=48),
     ("A40", "NVIDIA A40")),
    (Gpu("RTX A6000", _NV, "Ampere", (8, 6), True, True, False,
         {"fp32": 38.7, "tf32": 77.4, "fp16": 154.8, "bf16": 154.8},
         "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf (Table 9; "
         "the RTX A6000 datasheet's 309.7 TFLOP/s tensor figure is sparse)",
         memory_gb=48),
     ("RTX A6000", "A6000", "NVIDIA RTX A6000")),
    (Gpu("RTX 3090", _NV, "Ampere", (8, 6), True, True, False,
         {"fp32": 35.6, "tf32": 35.6, "fp16": 71.0, "bf16": 71.0},
         "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf (Table 9)",
         memory_gb=24),
     ("RTX 3090", "3090", "NVIDIA GeForce RTX 3090")),
    (Gpu("RTX 4090", _NV, "Ada Lovelace", (8, 9), True, True, True,
         {"fp32": 82.6, "tf32": 82.6, "fp16": 165.2, "bf16": 165.2, "fp8": 330.3},
         "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (Appendix A)",
         memory_gb=24),
     ("RTX 4090", "4090", "NVIDIA GeForce RTX 4090")),
    (Gpu("L4", _NV, "Ada Lovelace", (8, 9), True, True, True,
         {"fp32": 30.3, "tf32": 60.0, "fp16": 121.0, "bf16": 121.0, "fp8": 242.5},
         "https://www.nvidia.com/en-us/data-center/l4/ (datasheet: 120* / 242* / 485*, halved)", memory_gb=24),
     ("L4", "NVIDIA L4")),
    (Gpu("L40S", _NV, "Ada Lovelace", (8, 9), True, True, True,
         {"fp32": 91.6, "tf32": 183.0, "fp16": 362.05, "bf16": 362.05, "fp8": 733.0},
         "https://www.nvidia.com/en-us/data-center/l40s/ (datasheet)", memory_gb=48),
     ("L40S", "NVIDIA L40S")),
    (Gpu("H100 SXM", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
         "https://www.nvidia.com/en-us/data-center/h100/ (datasheet: 989* / 1979* / 3958*, halved); "
         "https://resources.nvidia.com/en-us-tensor-core (H100 whitepaper, Table 3)", memory_gb=80),
     ("H100", "H100 SXM", "H100 SXM5", "NVIDIA H100 80GB HBM3", "H100-80GB")),
    (Gpu("H100 PCIe", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 51.0, "tf32": 378.0, "fp16": 756.0, "bf16": 756.0, "fp8": 1513.0},
         "https://www.nvidia.com/en-us/data-center/h100/ (datasheet: 756* / 1513* / 3026*, halved)",
         memory_gb=80),
     ("H100 PCIe", "NVIDIA H100 PCIe")),
    (Gpu("H100 NVL", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 60.0, "tf32": 417.5, "fp16": 835.5, "bf16": 835.5, "fp8": 1670.5},
         "https://www.nvidia.com/en-us/data-center/h100/ (datasheet, H100 NVL: 835* / 1671* / 3341*, halved)",
         memory_gb=94),
     ("H100 NVL", "NVIDIA H100 NVL")),
    (Gpu("H200 SXM", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
         "https://www.nvidia.com/en-us/data-center/h200/ (datasheet: 989* / 1979* / 3958*, halved)",
         memory_gb=141),
     ("H200", "H200 SXM", "NVIDIA H200", "NVIDIA H200 141GB HBM3e")),
    (Gpu("H200 NVL", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 60.0, "tf32": 417.5, "fp16": 835.5, "bf16": 835.5, "fp8": 1670.5},
         "https://www.nvidia.com/en-us/data-center/h200/ (datasheet, H200 NVL: 835* / 1671* / 3341*, halved)",
         memory_gb=141),
     ("H200 NVL", "NVIDIA H200 NVL")),
    (Gpu("B200", _NV, "Blackwell", (10, 0), True, True, True,
         {"fp32": 75.0, "tf32": 1100.0, "fp16": 2250.0, "bf16": 2250.0, "fp8": 4500.0},
         "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200 per GPU: 2.2* / 4.5* / 9* PFLOPS, halved)",
         memory_gb=180),
     ("B200", "NVIDIA B200", "HGX B200")),
    (Gpu("H800 SXM", _NV, "Hopper", (9, 0), True, True, True,
         # The export variant of the H100 SXM: the same tensor cores, a narrower NVLink.
         {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
         "https://www.nvidia.com/en-us/data-center/h100/ (H800 SXM5 shares the H100 SXM5 compute figures; "
         "989* / 1979* / 3958*, halved)", memory_gb=80),
     ("H800", "H800 SXM", "H800 SXM5", "NVIDIA H800", "NVIDIA H800 80GB HBM3")),
    (Gpu("H800 PCIe", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 51.0, "tf32": 378.0, "fp16": 756.0, "bf16": 756.0, "fp8": 1513.0},
         "https://www.nvidia.com/en-us/data-center/h100/ (H800 PCIe shares the H100 PCIe compute figures; "
         "756* / 1513* / 3026*, halved)", memory_gb=80),
     ("H800 PCIe", "NVIDIA H800 PCIe")),
    (Gpu("GH200", _NV, "Hopper", (9, 0), True, True, True,
         {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9},
         "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/ (datasheet: 989* / 1979* / 3958*, "
         "halved)", memory_gb=96),
     ("GH200", "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e", "Grace Hopper")),
    (Gpu("GB200", _NV, "Blackwell", (10, 0), True, True, True,
         # Per GPU of a GB200 NVL72 rack (72 GPUs): 180* / 360* / 720* PFLOPS and 6,480 TFLOPS fp32, per 72.
         {"fp32": 90.0, "tf32": 1250.0, "fp16": 2500.0, "bf16": 2500.0, "fp8": 5000.0},
         "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (rack figures / 72, sparse halved)",
         memory_gb=186),
     ("GB200", "NVIDIA GB200")),
    (Gpu("B300", _NV, "Blackwell Ultra", (10, 3), True, True, True,
         # Per GPU of an HGX B300 (8 GPUs): 18* / 36* / 72* PFLOPS tf32 / fp16 / fp8, per 8, sparse halved.
         {"fp32": 75.0, "tf32": 1125.0, "fp16": 2250.0, "bf16": 2250.0, "fp8": 4500.0},
         "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B300 figures / 8, sparse halved)", memory_gb=288),
     ("B300", "NVIDIA B300", "HGX B300", "B300 SXM6")),
    (Gpu("L40", _NV, "Ada Lovelace", (8, 9), True, True, True,
         {"fp32": 90.5, "tf32": 90.5, "fp16": 181.05, "bf16": 181.05, "fp8": 362.0},
         "https://www.nvidia.com/en-us/data-center/l40/ (datasheet: 181* / 362.1* / 724*, halved)",
         memory_gb=48),
     ("L40", "NVIDIA L40")),
    (Gpu("RTX 4080", _NV, "Ada Lovelace", (8, 9), True, True, True,
         {"fp32": 48.7, "tf32": 48.7, "fp16": 97.5, "bf16": 97.5, "fp8": 194.9},
         "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (Appendix A)",
         memory_gb=16),
     ("RTX 4080", "4080", "NVIDIA GeForce RTX 4080")),
    (Gpu("RTX 3080", _NV, "Ampere", (8, 6), True, True, False,
         {"fp32": 29.8, "tf32": 29.8, "fp16": 59.5, "bf16": 59.5},
         "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf (Table 9)",
         memory_gb=10),
     ("RTX 3080", "3080", "NVIDIA GeForce RTX 3080")),
    (Gpu("A800 SXM", _NV, "Ampere", (8, 0), True, True, False,
         # The export variant of the A100: the same tensor cores, a narrower NVLink.
         {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0},
         "https://www.nvidia.cn/data-center/a800/ (A800 SXM4 shares the A100 SXM4 compute figures)",
         memory_gb=80),
     ("A800", "A800 SXM4", "NVIDIA A800-SXM4-80GB", "NVIDIA A800 80GB PCIe")),
    (Gpu("RTX 5090", _NV, "Blackwell (consumer)", (12, 0), True, True, True,
         # GeForce: fp16/bf16 tensor math with fp32 accumulation runs at half the fp16-accumulate rate. The
         # whitepaper's rows "Peak FP16 / BF16 Tensor TFLOPS with FP32 Accumulate" read 209.5 dense (419 sparse),
         # fp8 with fp32 accumulation 419, TF32 104.8, at the rated 2407 MHz boost clock; main-horse's mmapeak table
         # (https://main-horse.github.io/posts/5090-mm-perf) quotes the same "Spec" figures. The card runs above
         # that clock under load, so users measure more than the datasheet: 224.3 TFLOP/s bf16 there, 221-242
         # elsewhere (TYPICAL_TFLOPS). The figures stay NVIDIA's; a measurement over 100% of them is no error.
         {"fp32": 104.8, "tf32": 104.8, "fp16": 209.5, "bf16": 209.5, "fp8": 419.0},
         "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf "
         "(Appendix A, the rows with FP32 accumulate, dense, at the 2407 MHz boost clock)", memory_gb=32),
     ("RTX 5090", "5090", "NVIDIA GeForce RTX 5090")),
    # Cards known by their compute capability and native formats (https://developer.nvidia.com/cuda-gpus), with no
    # throughput figures yet: the hardware rules need only the first, advise measures with --probe.
    (Gpu("RTX PRO 6000", _NV, "Blackwell (workstation)", (12, 0), True, True, True,
         None, "https://developer.nvidia.com/cuda-gpus (compute capability 12.0)", memory_gb=96),
     ("RTX PRO 6000", "RTX PRO 6000 Blackwell", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
      "NVIDIA RTX PRO 6000 Blackwell Server Edition")),
    (Gpu("GB10", _NV, "Blackwell (DGX Spark)", (12, 1), True, True, True,
         None, "https://developer.nvidia.com/cuda-gpus (compute capability 12.1)", memory_gb=128),
     ("GB10", "NVIDIA GB10", "DGX Spark")),
    (Gpu("GB300", _NV, "Blackwell Ultra", (10, 3), True, True, True,
         None, "https://developer.nvidia.com/cuda-gpus (compute capability 10.3)", memory_gb=288),
     ("GB300", "NVIDIA GB300")),
    (Gpu("H20", _NV, "Hopper", (9, 0), True, True, True,
         None, "https://developer.nvidia.com/cuda-gpus (Hopper, compute capability 9.0)", memory_gb=96),
     ("H20", "NVIDIA H20")),
    (Gpu("L20", _NV, "Ada Lovelace", (8, 9), True, True, True,
         None, "https://developer.nvidia.com/cuda-gpus (Ada Lovelace, compute capability 8.9)", memory_gb=48),
     ("L20", "NVIDIA L20")),
    (Gpu("MI250X", _AMD, "CDNA 2", None, True, False, False,
         # fp32 is the matrix (MFMA) rate; vector fp32 is 47.9. CDNA 2 has no XF32 and no FP8.
         {"fp32": 95.7, "fp16": 383.0, "bf16": 383.0},
         "https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html", gfx_arch="gfx90a",
         memory_gb=128),
     ("MI250X", "AMD Instinct MI250X", "AMD Instinct MI250X/MI250")),
    (Gpu("MI300X", _AMD, "CDNA 3", None, True, True, True,
         # TF32 is AMD's XF32; PyTorch uses it through hipBLASLt only in recent ROCm builds.
         {"fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9},
         "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (datasheet: dense figures)",
         gfx_arch="gfx942", memory_gb=192),
     ("MI300X", "AMD Instinct MI300X", "AMD Instinct MI300X OAM")),
    (Gpu("MI325X", _AMD, "CDNA 3", None, True, True, True,
         # The MI300X's compute with 256 GB of HBM3E.
         {"fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9},
         "https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html (datasheet: dense figures)",
         gfx_arch="gfx942", memory_gb=256),
     ("MI325X", "AMD Instinct MI325X", "AMD Instinct MI325X OAM")),
)

_VENDOR_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro", "rtx", "amd", "instinct", "radeon", "hgx", "dgx",
                           "generation", "edition", "workstation", "superchip"})
_MEMORY = re.compile(r"^(\d+(\.\d+)?(gb|g|gib)|hbm\d*e?|gddr\d*x?)$")
_FORM = {"sxm": "sxm", "sxm2": "sxm", "sxm3": "sxm", "sxm4": "sxm", "sxm5": "sxm", "pcie": "pcie", "pci": "pcie",
         "nvl": "nvl", "oam": "oam"}


def _key(name: str) -> tuple[str, str | None]:
    """(model, form factor) of a GPU name: lowercase, vendor words, memory sizes and separators dropped.

    "NVIDIA A100-SXM4-80GB" -> ("a100", "sxm"); "NVIDIA GeForce RTX 3090" -> ("3090", None);
    "AMD Instinct MI250X/MI250" -> ("mi250x", None).
    """
    text = name.lower().split("/", 1)[0]
    # "a100-80gb" and "80 gb" both drop; "2080 ti" must stay one model name.
    tokens = re.findall(r"[a-z0-9.]+", text)
    model: list[str] = []
    form: str | None = None
    for i, token in enumerate(tokens):
        token = token.strip(".")
        if not token or token in _VENDOR_WORDS or _MEMORY.match(token) or token in ("gb", "gib"):
            continue
        if token.replace(".", "").isdigit() and i + 1 < len(tokens) and tokens[i + 1] in ("gb", "gib"):
            continue  # "80 GB"
        if token.startswith("rtx") and len(token) > 3:  # "RTX3090", "rtxa6000"
            token = token[3:]
        if token in _FORM:
            form = _FORM[token]
            continue
        model.append(token)
    return "".join(model), form


def _index(entries: Iterable[tuple[Gpu, tuple[str, ...]]]) -> dict[tuple[str, str | None], Gpu]:
    index: dict[tuple[str, str | None], Gpu] = {}
    for gpu, aliases in entries:
        for alias in (gpu.name, *aliases):
            key = _key(alias)
            index.setdefault(key, gpu)
            # The first entry listing a bare model name (no form) is that model's default variant.
            index.setdefault((key[0], None), gpu)
    return index


_INDEX = _index(_ENTRIES)
GPUS: tuple[Gpu, ...] = tuple(gpu for gpu, _ in _ENTRIES)


def find_gpu(name: str) -> Gpu | None:
    """The table entry for a GPU name as people or drivers write it, or None."""
    model, form = _key(name)
    if not model:
        return None
    gpu = _INDEX.get((model, form))
    if gpu is None and form is not None:
        gpu = _INDEX.get((model, None))  # "T4 PCIe": the only T4
    return gpu


def suggestions(name: str, limit: int = 3) -> list[str]:
    model, _ = _key(name)
    names = {gpu.name: _key(gpu.name)[0] for gpu in GPUS}
    by_key: dict[str, str] = {}
    for (key, _form), gpu in _INDEX.items():
        by_key.setdefault(key, gpu.name)
    close = difflib.get_close_matches(model, list(by_key), n=limit, cutoff=0.5)
    found = []
    for key in close:
        if by_key[key] not in found:
            found.append(by_key[key])
    if not found:  # prefix match: "h1" -> H100 SXM...
        found = [n for n, key in names.items() if model and key.startswith(model[:2])][:limit]
    return found


# "cc8.9", "cc 8.9", "8.9", "sm_89", "sm89", "compute_89", "sm_100a": any NVIDIA card by compute capability.
_CAPABILITY = re.compile(r"^(?:cc\s*)?(\d{1,2})\.(\d)$|^(?:sm|compute)_?(\d{1,2})(\d)[af]?$", re.IGNORECASE)
_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$", re.IGNORECASE)

# Every compute capability an NVIDIA GPU has had (CUDA's sm_XX targets and NVIDIA's CUDA GPUs table, 2026):
# a name such as sm_999 or cc 9.9 describes no card, and its capabilities would be guesses.
KNOWN_CAPABILITIES = frozenset({
    (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 2), (3, 5), (3, 7), (5, 0), (5, 2), (5, 3),
    (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 1),
    (10, 3), (11, 0), (12, 0), (12, 1),
})
# AMD ISAs by generation: GCN 1-5 and CDNA are gfx6xx-gfx9xx, RDNA 1-4 gfx10xx-gfx12xx (LLVM's AMDGPU targets).
_GFX_GENERATIONS = re.compile(r"^gfx(?:[6-9][0-9a-f]{2}|1[0-2][0-9a-f]{2})$", re.IGNORECASE)


def gpu_from_spec(text: str) -> Gpu | None:
    """A card described by its compute capability (`cc8.9`, `sm_89`, `8.9`) or AMD gfx ISA (`gfx942`). Raises
    UnknownGpuError for a capability or ISA that is well formed but that no card has (`sm_999`, `gfx9999`)."""
    spec = text.strip()
    match = _CAPABILITY.match(spec)
    if match:
        major, minor = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        cc = (int(major), int(minor))
        if cc not in KNOWN_CAPABILITIES:
            known = ", ".join(f"{a}.{b}" for a, b in sorted(KNOWN_CAPABILITIES) if a >= 7)
            raise UnknownGpuError(spec, (), f"no NVIDIA GPU has compute capability {cc[0]}.{cc[1]} (those of "
                                  f"Volta and later: {known})")
        return gpu_from_capability(f"compute capability {cc[0]}.{cc[1]}", cc)
    if _GFX.match(spec):
        if not _GFX_GENERATIONS.match(spec):
            raise UnknownGpuError(spec, (), "no AMD GPU has this ISA (they run from gfx6xx to gfx12xx, as gfx942)")
        return gpu_from_capability(spec.lower(), None, spec.lower())
    return None


def custom_gpu(name: str, spec: dict) -> Gpu:
    """A card from the configuration's custom-gpus table (validated by config.py): capabilities from its
    compute capability or gfx ISA unless given, peaks as given."""
    cc_text = spec.get("compute-capability")
    cc = _parse_cc(str(cc_text)) if cc_text is not None else None
    gfx = spec.get("gfx-arch")
    base = gpu_from_capability(name, cc, gfx, spec.get("memory-gb"))
    return base.replace(
        bf16=spec.get("bf16", base.bf16),
        tf32=spec.get("tf32", base.tf32),
        fp8=spec.get("fp8", base.fp8),
        peak_tflops={k: float(v) for k, v in spec.get("peak-tflops", {}).items()},
        source="custom-gpus in the configuration",
    )


def resolve_targets(names: Sequence[str], custom: dict | None = None) -> tuple[Gpu, ...]:
    """The GPUs named on the command line or in the configuration, in order, without duplicates.

    "auto" means the GPUs of this machine (detect_local); `cc8.9` / `sm_89` / `gfx942` any card of that
    compute capability or ISA; `custom` the configuration's own cards (name -> spec), which come first.
    Comma-separated lists are accepted. Raises UnknownGpuError for a name that matches nothing.
    """
    custom_by_key = {_key(name)[0]: (name, spec) for name, spec in (custom or {}).items()}
    result: list[Gpu] = []
    for raw in names:
        for name in (part.strip() for part in str(raw).split(",")):
            if not name:
                continue
            found: Iterable[Gpu]
            if name.lower() == "auto":
                found = detect_local()
            elif _key(name)[0] in custom_by_key:
                found = (custom_gpu(*custom_by_key[_key(name)[0]]),)
            else:
                gpu = find_gpu(name) or gpu_from_spec(name)
                if gpu is None:
                    raise UnknownGpuError(name, suggestions(name))
                found = (gpu,)
            for gpu in found:
                if gpu not in result:
                    result.append(gpu)
    return tuple(result)


# ---------------------------------------------------------------------------------------------------------------
# Cards that are not in the table: capabilities from the compute capability or the gfx ISA
# ---------------------------------------------------------------------------------------------------------------

_ARCH_BY_CC = (
    ((12, 0), "Blackwell (consumer)"),
    ((10, 0), "Blackwell"),
    ((9, 0), "Hopper"),
    ((8, 9), "Ada Lovelace"),
    ((8, 0), "Ampere"),
    ((7, 5), "Turing"),
    ((7, 0), "Volta"),
    ((6, 0), "Pascal"),
    ((5, 0), "Maxwell"),
    ((0, 0), "pre-Maxwell"),
)

# gfx ISA -> (architecture, bf16 matrix, xf32/tf32, fp8)
_AMD_ARCH = {
    "gfx908": ("CDNA", True, False, False),
    "gfx90a": ("CDNA 2", True, False, False),
    "gfx940": ("CDNA 3", True, True, True),
    "gfx941": ("CDNA 3", True, True, True),
    "gfx942": ("CDNA 3", True, True, True),
    "gfx950": ("CDNA 4", True, False, True),  # CDNA 4 dropped XF32
}


def architecture_of(cc: tuple[int, int]) -> str:
    if cc[0] == 11:
        return "Blackwell (Thor)"
    for floor, name in _ARCH_BY_CC:
        if cc >= floor:
            return name
    return "unknown"


def capabilities(cc: tuple[int, int] | None, gfx_arch: str | None = None) -> tuple[bool, bool, bool]:
    """(native bf16, tf32, fp8) from an NVIDIA compute capability or an AMD gfx ISA name."""
    if cc is not None and not gfx_arch:
        return cc >= (8, 0), cc >= (8, 0), cc >= (8, 9)
    if gfx_arch:
        base = gfx_arch.split(":", 1)[0].lower()
        if base in _AMD_ARCH:
            _, bf16, tf32, fp8 = _AMD_ARCH[base]
            return bf16, tf32, fp8
        # RDNA 3/4 (gfx11xx, gfx12xx) have bf16 WMMA; older GCN/RDNA have no bf16 matrix path.
        return base.startswith(("gfx11", "gfx12")), False, base.startswith("gfx12")
    return False, False, False


def gpu_from_capability(name: str, cc: tuple[int, int] | None, gfx_arch: str | None = None,
                        memory_gb: float | None = None) -> Gpu:
    """A Gpu for a card that is not in the table: capabilities from its architecture, no peak figures."""
    bf16, tf32, fp8 = capabilities(cc, gfx_arch)
    if gfx_arch:
        base = gfx_arch.split(":", 1)[0].lower()
        arch = _AMD_ARCH.get(base, (base,))[0]
        return Gpu(name, _AMD, arch, None, bf16, tf32, fp8, {}, "derived from the gfx ISA reported by the driver",
                   gfx_arch=base, memory_gb=memory_gb, in_table=False)
    arch = architecture_of(cc) if cc else "unknown"
    return Gpu(name, _NV, arch, cc, bf16, tf32, fp8, {},
               "derived from the compute capability reported by the driver", memory_gb=memory_gb, in_table=False)


def device_from_description(desc: DeviceInfo) -> Gpu:
    """The Gpu for a device the probe queried: the table entry when the name is known, else one built from
    its compute capability (or gfx ISA). The driver's name is kept so that messages show what the user sees."""
    found = find_gpu(desc.name)
    cc = desc.compute_capability
    if found is not None and (found.compute_capability is None or cc is None or found.compute_capability == cc):
        return found.replace(memory_gb=round(desc.memory_bytes / 2**30, 1)) if desc.memory_bytes else found
    memory = round(desc.memory_bytes / 2**30, 1) if desc.memory_bytes else None
    return gpu_from_capability(desc.name, cc, desc.gcn_arch, memory)


# ---------------------------------------------------------------------------------------------------------------
# This machine
# ---------------------------------------------------------------------------------------------------------------

def _parse_cc(text: str) -> tuple[int, int] | None:
    match = re.match(r"^\s*(\d+)\.(\d+)\s*$", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def parse_nvidia_smi(output: str) -> tuple[Gpu, ...]:
    """GPUs from `nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader` (or name only) output."""
    gpus: list[Gpu] = []
    for line in output.splitlines():
        if not line.strip():
            continue
        name, _, cap = line.partition(",")
        name = name.strip()
        cc = _parse_cc(cap) if cap else None
        gpu = find_gpu(name)
        if gpu is None or (cc is not None and gpu.compute_capability not in (None, cc)):
            gpu = gpu_from_capability(name, cc)
        gpus.append(gpu)
    return tuple(gpus)


def _nvidia_smi() -> tuple[Gpu, ...] | None:
    """GPUs nvidia-smi sees; None when it is not installed or fails (then the probe is asked instead)."""
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


def detect_local() -> tuple[Gpu, ...]:
    """The GPUs of this machine, one per device (duplicates kept: 8 A100s are 8 entries). Empty without one."""
    found = _nvidia_smi()
    if found is not None:
        return found
    from precisionlint.advise import probe

    try:
        devices = probe.query_devices()
    except probe.ProbeUnavailable:
        return ()
    return tuple(device_from_description(d) for d in devices if d.kind == "cuda")


def fleet_names(gpus: Iterable[Gpu]) -> str:
    """'A100 SXM and V100 SXM2' for messages; duplicates removed, order kept."""
    names: list[str] = []
    for gpu in gpus:
        if gpu.name not in names:
            names.append(gpu.name)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def known_names() -> list[str]:
    return [gpu.name for gpu in GPUS]


# ---------------------------------------------------------------------------------------------------------------
# Maximum achievable matmul throughput: what the best measurements reach, beside the datasheet peaks above
# ---------------------------------------------------------------------------------------------------------------

MAMF_SOURCE = ("https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"
               "#maximum-achievable-matmul-flops-comparison-table (commit 744d01e, August 2026): mamf-finder.py, "
               "mean of 100 iterations after 50 warm-up ones, at the best shape of a search; fp8 is float8_e4m3fn "
               "through torch._scaled_mm without fast accumulation")


# Typical figures: one published measurement at one shape, not the best of a search. Judged against the same way,
# and named "typical" wherever they are shown.
MAG_SOURCE = ("https://github.com/mag-/gpu_benchmark (README, Stats; commit 2268e5a): mamf-finder.py with an Optuna "
              "search of shapes, bf16, median of 100 iterations with the L2 cache cleared between them")
RTX4090_STOCK_SOURCE = ("https://github.com/JustAResearcher/gpu-unlock-ada/blob/master/docs/evidence/"
                        "rtx4090-595.91.07/README.md (the stock column: cuBLAS GEMM 8192x8192x8192, driver 595.91.07, "
                        "450 W, no overclock)")
RTX5090_SOURCE = ("https://main-horse.github.io/posts/5090-mm-perf (torch.matmul through the SemiAnalysis matmul "
                  "benchmark, bf16)")
TF32_NOTE_SOURCE = ("https://github.com/pytorch/pytorch/blob/main/docs/source/notes/cuda.rst (TF32 on Ampere: a "
                    "10240-cubed float32 matmul 'takes 0.016s on GA100' with TF32)")


class Achievable(FrozenRecord):
    """A published matmul throughput of one card and format.

    kind "maximum": the best of a search over shapes (the MAMF tables), so a single square matmul reaches less;
    kind "typical": one measurement at one shape, labelled so wherever it is shown.
    """

    __slots__ = ("tflops", "shape", "torch", "source", "note", "kind")
    _fields = __slots__

    def __init__(self, tflops: float, shape: str, torch: str, source: str = MAMF_SOURCE, note: str = "",
                 kind: str = "maximum") -> None:
        self.tflops = tflops
        self.shape = shape  # MxNxK it was measured at (the best shape found, for a maximum)
        self.torch = torch  # the torch build it was measured with ("" where the source does not say)
        self.source = source
        self.note = note
        self.kind = kind

    @property
    def dims(self) -> tuple[int, int, int]:
        m, n, k = (int(part) for part in self.shape.split("x"))
        return m, n, k

    @property
    def label(self) -> str:
        """How the reports name it: 'best published measurement' or 'typical published measurement'."""
        return "best published measurement" if self.kind == "maximum" else "typical published measurement"


# Keyed by the table's Gpu.name. Only measured figures: a format nobody published (fp8 on Ada, where no maximum
# was published: the L4, L40, L40S, RTX 4080 and 4090; every format of the L40S, whose published figures are the
# datasheet's alone) has no entry and is not judged. H100 / H200 bf16 is judged against 794.5 (about 790).
ACHIEVABLE_TFLOPS: dict[str, dict[str, Achievable]] = {
    "A100 SXM": {"bf16": Achievable(271.2, "1024x10240x5120", "2.6.0+cu126")},
    "A100 PCIe": {"bf16": Achievable(252.9, "2048x5120x6144", "2.5.1+cu124")},
    "H100 SXM": {"bf16": Achievable(794.5, "2048x2048x13312", "2.7.0+cu126"),
                 "fp8": Achievable(1402.6, "1024x9216x14336", "2.7.0+cu126")},
    "H200 SXM": {"bf16": Achievable(794.5, "2048x2048x13312", "2.7.0+cu126",
                                    note="the H100 SXM figure; the source lists the H200 as the same"),
                 "fp8": Achievable(1453.4, "1280x4096x12032", "2.7.1+cu128")},
    "GH200": {"bf16": Achievable(828.6, "1024x15360x4096", "2.6.0+cu126", note="900 W, 141 GiB HBM3e version"),
              "fp8": Achievable(1535.0, "1024x14336x14336", "2.6.0+cu126", note="900 W, 141 GiB HBM3e version")},
    "B200": {"bf16": Achievable(1745.0, "1792x16128x3072", "2.7.1+cu128"),
             "fp8": Achievable(3432.5, "15360x4096x3072", "2.7.1+cu128")},
    "GB200": {"bf16": Achievable(1822.0, "4096x9728x2048", "2.10.0.dev20250916+cu130"),
              "fp8": Achievable(3615.6, "19456x5120x1536", "2.10.0.dev20250916+cu130")},
    "B300": {"bf16": Achievable(1769.0, "12288x18432x1024", "2.9.1+cu130"),
             "fp8": Achievable(3353.3, "3072x6144x7168", "2.9.1+cu130")},
    "RTX 4090": {"bf16": Achievable(178.5, "15360x6784x8192", "", MAG_SOURCE,
                                    note="above the 165.2 of the datasheet: GeForce cards boost past the clock "
                                         "their datasheet figures assume")},
    "MI300X": {"bf16": Achievable(668.4, "10240x15360x8192", "2.5.1+6.3.42131",
                                  note="PYTORCH_TUNABLEOP_ENABLED=1")},
    "MI325X": {"bf16": Achievable(784.9, "13312x10240x8192", "2.6.0+6.2.4", note="PYTORCH_TUNABLEOP_ENABLED=1")},
    "MI355X": {"bf16": Achievable(1565.0, "12288x8192x8192", "2.8.0+rocm7.0.2")},
}

# One measurement each, at the shape given. The RTX 4090's are one owner's run of a stock card; the A100's TF32
# figure is PyTorch's own example (2 x 10240^3 FLOP in 0.016 s; its float32 timing, 0.11 s, is the datasheet's
# 19.5 TFLOP/s to the rounding of the note, so it adds nothing).
TYPICAL_TFLOPS: dict[str, dict[str, Achievable]] = {
    "A100 SXM": {"tf32": Achievable(134.2, "10240x10240x10240", "", TF32_NOTE_SOURCE, kind="typical",
                                    note="GA100; the note does not say which form factor")},
    "A100 PCIe": {"tf32": Achievable(134.2, "10240x10240x10240", "", TF32_NOTE_SOURCE, kind="typical",
                                     note="GA100; the note does not say which form factor")},
    "RTX 4090": {"bf16": Achievable(148.45, "8192x8192x8192", "", RTX4090_STOCK_SOURCE, kind="typical"),
                 "fp16": Achievable(162.59, "8192x8192x8192", "", RTX4090_STOCK_SOURCE, kind="typical"),
                 "tf32": Achievable(88.64, "8192x8192x8192", "", RTX4090_STOCK_SOURCE, kind="typical",
                                    note="above the datasheet's 82.6 at the rated boost clock")},
    "RTX 5090": {"bf16": Achievable(224.3, "16384x8192x1280", "", RTX5090_SOURCE, kind="typical",
                                    note="above the datasheet's 209.5 at the rated 2407 MHz boost clock")},
}


def achievable(gpu: Gpu, fmt: str, dims: tuple[int, int, int] | None = None) -> Achievable | None:
    """The published figure to judge a measurement of `fmt` on `gpu` against, or None (nobody published one).

    A figure measured at the same shape as the measurement (`dims`, MxNxK) comes first: it compares like with
    like. Then the maximum of a shape search, then a typical figure measured at another shape."""
    maximum = ACHIEVABLE_TFLOPS.get(gpu.name, {}).get(fmt)
    typical = TYPICAL_TFLOPS.get(gpu.name, {}).get(fmt)
    for figure in (typical, maximum):
        if figure is not None and dims is not None and figure.dims == dims:
            return figure
    return maximum or typical
