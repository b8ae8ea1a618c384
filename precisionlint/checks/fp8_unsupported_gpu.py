"""## What it does
Finds FP8 training (Lightning `precision="transformer-engine"` or `"transformer-engine-float16"`,
Accelerate `mixed_precision: fp8`) when a target GPU has no FP8 tensor cores: NVIDIA GPUs below compute
capability 8.9 (everything before Ada Lovelace and Hopper, including the A100), and AMD before CDNA 3.

Nothing is reported for a file written for another accelerator, which never runs on the target GPUs: a Python
module that imports `habana_frameworks`, `optimum.habana` or `torch_xla` at its top level (not under an `if` or
`try`), an Accelerate config whose `distributed_type` is XLA, MULTI_HPU, MULTI_XPU or another non-GPU type, a
setting beside a Lightning `accelerator` of "tpu", "hpu" or "mps", and the files of the optimum-habana project
(Transformers on Habana Gaudi; its DeepSpeed configs are written for Gaudi). A file that mentions CUDA, NVIDIA
or Accelerate's MULTI_GPU anywhere keeps its findings: it may run on the target GPUs too.

## Why is this bad?
FP8 matmuls need FP8 tensor cores: compute capability 8.9 (L4, L40S, RTX 4090) or 9.0+ (H100, H200, B200).
NVIDIA Transformer Engine, which Lightning's `"transformer-engine"` precision uses, refuses to run FP8 below
8.9 ("Device compute capability 8.9 or higher required for FP8 execution"), so the run fails as soon as
training starts (an error). Accelerate warns and falls back to fp16 mixed precision below 8.9, so the run
trains in another precision than the config says (a warning). The suggested replacement is written in the
framework's own vocabulary (Lightning `'bf16-mixed'`, Accelerate `'bf16'`, Composer `'amp_bf16'`, axolotl
`bf16: true`; the fp16 spelling where a target GPU lacks bf16 too). In test code the finding is information: a
test exercises FP8 on purpose.

All of this is about the target GPUs. Habana Gaudi, TPUs and Apple silicon have their own precision
support (Gaudi and TPUs compute natively in bf16), so for a file written for one of them the finding would be
false, which is why such files are left alone.

## Example
```yaml
# precisionlint check --gpu A100
trainer:
  precision: transformer-engine
```

## Use instead
```yaml
trainer:
  precision: bf16-mixed
```

## Fix safety
No fix: which precision replaces FP8 depends on the GPU (bf16 on Ampere, fp16 with loss scaling before it).

## References
- Transformer Engine support matrix: https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/installation.html
- Lightning FP8 (Transformer Engine): https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
- Accelerate low-precision training: https://huggingface.co/docs/accelerate/usage_guides/low_precision_training
- CUDA GPUs and compute capabilities: https://developer.nvidia.com/cuda-gpus
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.model import Finding, Severity

CODE = "PL304"
NAME = "fp8-unsupported-gpu"
SEVERITY = Severity.ERROR
SUMMARY = "FP8 training on a GPU without FP8 tensor cores (below compute capability 8.9)."
TARGET = "settings"
READS = "any-framework"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._gpu import framework_label, instead, names, precision_settings, shown, targets

    lacking = [g for g in targets(ctx) if not g.fp8]
    if not lacking:
        return
    where = names(lacking)
    bf16 = all(g.bf16 for g in lacking)
    in_tests = is_test_code(ctx.document.path)
    for setting, mode in precision_settings(ctx):
        if mode.dtype != "fp8":
            continue
        severity = None
        if setting.framework == "accelerate":
            effect = "Accelerate warns and falls back to fp16 mixed precision"
            severity = Severity.WARNING  # the run goes on, in another precision than the config says
        elif setting.framework in ("lightning", "composer"):
            effect = "Transformer Engine refuses to run FP8 there"
        else:
            effect = "FP8 matmuls need FP8 tensor cores"
        suggested = instead(setting, "bf16" if bf16 else "fp16")
        yield ctx.report(
            setting.span,
            f"FP8 ({framework_label(setting)} {shown(setting)}) on {where}, without FP8 tensor cores (needs "
            f"compute capability 8.9+): {effect}; use {suggested}",
            severity=Severity.INFO if in_tests else severity,
        )
