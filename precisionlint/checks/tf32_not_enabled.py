"""## What it does
Finds full float32 training (Lightning `precision="32-true"`, `32` or `"32"`; Accelerate
`mixed_precision: no`) aimed at NVIDIA GPUs whose TF32 tensor cores run float32 matmuls much faster (A100,
A30, A10, A40, L4, L40S, H100, H200, B200), in a file that says nothing about TF32: no
`tf32_matmul_precision`, `tf32`, `set_float32_matmul_precision`, `allow_tf32` or `fp32_precision` anywhere in
it, comments included.

Nothing is reported for a file written for another accelerator, which never runs on the target GPUs: a Python
module that imports `habana_frameworks`, `optimum.habana` or `torch_xla` at its top level (not under an `if` or
`try`), an Accelerate config whose `distributed_type` is XLA, MULTI_HPU, MULTI_XPU or another non-GPU type, a
setting beside a Lightning `accelerator` of "tpu", "hpu" or "mps", and the files of the optimum-habana project
(Transformers on Habana Gaudi; its DeepSpeed configs are written for Gaudi). A file that mentions CUDA, NVIDIA
or Accelerate's MULTI_GPU anywhere keeps its findings: it may run on the target GPUs too.
Nor for a file whose name names other GPU models and none of the targets: with `--gpu V100`, a project's
`a100_config.json` is the one it runs on A100s.

## Why is this bad?
PyTorch runs float32 matmuls in full IEEE precision unless told otherwise:
`torch.backends.cuda.matmul.allow_tf32` has defaulted to False since PyTorch 1.12, and
`set_float32_matmul_precision` defaults to `"highest"`. (TF32 is often said to be PyTorch's default; that is only
true of cuDNN convolutions, where `torch.backends.cudnn.allow_tf32` defaults to True.) On an A100, TF32 runs
float32 matmuls at 156 TFLOP/s against 19.5, keeping float32's range and accumulation and rounding only the
inputs to 10 mantissa bits.

Whether that rounding is acceptable is a choice, and the config does not show it was made. Write
`"high"` to take the speed-up or `"highest"` to record that full float32 is intended; either silences this
rule (and Lightning prints a hint about tensor cores at start-up while the precision is `"highest"`).

Not reported where TF32 would not help: GPUs without TF32, GeForce-class cards whose datasheet TF32 rate
equals their float32 rate (RTX 3090, RTX 4090, A10G), cards missing from precisionlint's table, and AMD GPUs
(PyTorch's TF32 path on ROCm depends on the version and an environment variable).

## Example
```toml
# precisionlint check --gpu A100
[trainer_config]
precision = "32-true"
```

## Use instead
```toml
[trainer_config]
precision = "32-true"
tf32_matmul_precision = "high"
```

## Fix safety
No fix: TF32 changes results, so enabling it is a person's decision.

## References
- PyTorch TF32 notes: https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
- PyTorch 1.12 default change: https://github.com/pytorch/pytorch/pull/76509
- `torch.set_float32_matmul_precision`:
  https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL305"
NAME = "tf32-not-enabled"
SEVERITY = Severity.INFO
SUMMARY = "float32 training on a GPU with fast TF32 and no TF32 setting anywhere: decide 'high' or 'highest'."
TARGET = "settings"
READS = "any-framework"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True

MIN_TF32_SPEEDUP = 1.5  # datasheet TF32 / float32 rate below which TF32 is not worth a finding
# Any of these in the text means the author has thought about TF32 (a setting, a call, even a comment).
_TF32_WORDS = ("tf32", "matmul_precision", "fp32_precision")


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._gpu import framework_label, names, precision_settings, shown, targets

    faster = [g for g in targets(ctx)
              if g.vendor == "nvidia" and g.tf32 and (g.speedup("tf32") or 0.0) >= MIN_TF32_SPEEDUP]
    if not faster:
        return
    if any(s.name in ("tf32_matmul_precision", "tf32") for s in ctx.settings):
        return
    lowered = ctx.document.text.lower()
    if any(word in lowered for word in _TF32_WORDS):
        return
    gain = min(g.speedup("tf32") or 0.0 for g in faster)
    for setting, mode in precision_settings(ctx):
        if mode.dtype != "fp32" or mode.kind != "true":
            continue
        how = ('tf32_matmul_precision = "high"' if setting.scope == "trainer_config"
               else 'torch.set_float32_matmul_precision("high")')
        yield ctx.report(
            setting.span,
            f"float32 training ({framework_label(setting)} {shown(setting)}) on {names(faster)} with TF32 off; "
            f"write {how} to use it, or 'highest' to record that full float32 is intended"
            f"\nfloat32 matmuls run at PyTorch's default 'highest'; TF32 runs them {gain:.0f}x faster on "
            f"{names(faster)} (datasheet)",
        )
