"""The GPU table: each card's compute capability (or AMD ISA), native formats and datasheet peaks, with the
spellings people and drivers use for it. Data only; names.py looks a name up in it.

Peak figures are dense (no 2:4 sparsity) TFLOP/s with float32 accumulation, the mode PyTorch uses for
fp16/bf16 matmuls, taken from each product's datasheet or architecture whitepaper (`Gpu.source`).
Datasheets that print only sparse figures (marked *) are halved. GeForce cards run fp16/bf16 tensor math with
fp32 accumulation at half the fp16-accumulate rate, so their figures here are the fp32-accumulate ones.
"""

from __future__ import annotations

from precisionlint.hardware.gpu import AMD, NVIDIA, Gpu

_NV = NVIDIA
_AMD = AMD

ENTRIES: tuple[tuple[Gpu, tuple[str, ...]], ...] = (
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

GPUS: tuple[Gpu, ...] = tuple(gpu for gpu, _ in ENTRIES)
