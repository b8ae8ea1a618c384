"""Maximum achievable matmul throughput: what the best published measurements reach, beside the datasheet peaks
of the table, and the figure a probe measurement is judged against."""

from __future__ import annotations

from precisionlint.core.records import FrozenRecord
from precisionlint.hardware.gpu import Gpu

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
