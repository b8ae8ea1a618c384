"""## What it does
Finds TF32 settings when a target GPU has no TF32: `tf32_matmul_precision = "high"` or `"medium"`,
`torch.set_float32_matmul_precision("high")` in a script, the script's own switches
(`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`,
`...fp32_precision = "tf32"`, except under a compute-capability test), and Transformers `tf32: true`. TF32 tensor cores
start with NVIDIA Ampere (compute capability 8.0); P100, V100, T4 and RTX 20xx have none, nor does AMD's
MI250X.

Nothing is reported for a file written for another accelerator, which never runs on the target GPUs: a Python
module that imports `habana_frameworks`, `optimum.habana` or `torch_xla` at its top level (not under an `if` or
`try`), an Accelerate config whose `distributed_type` is XLA, MULTI_HPU, MULTI_XPU or another non-GPU type, a
setting beside a Lightning `accelerator` of "tpu", "hpu" or "mps", and the files of the optimum-habana project
(Transformers on Habana Gaudi; its DeepSpeed configs are written for Gaudi). A file that mentions CUDA, NVIDIA
or Accelerate's MULTI_GPU anywhere keeps its findings: it may run on the target GPUs too.
Nor for a file whose name names other GPU models and none of the targets: with `--gpu V100`, a project's
`a100_config.json` is the one it runs on A100s.

## Why is this bad?
`set_float32_matmul_precision("high")` (and `"medium"`, which is the same on CUDA) only allows TF32: on a GPU
without it float32 matmuls run exactly as before, in full IEEE float32. The setting does nothing, but reads as
if the run were getting TF32's speed-up, so it is reported as information.

Transformers is stricter: `TrainingArguments(tf32=True)` raises `ValueError: --tf32 requires Ampere or a newer
GPU arch, cuda>=11 and torch>=1.7` when the GPU's compute capability is below 8.0, and on ROCm builds of
PyTorch (its check requires a CUDA build), so the run does not start. That case is an error.

All of this is about the target GPUs. Habana Gaudi, TPUs and Apple silicon have their own precision
support (Gaudi and TPUs compute natively in bf16), so for a file written for one of them the finding would be
false, which is why such files are left alone.

## Example
```json
{"output_dir": "out", "fp16": true, "tf32": true}
```
checked with `--gpu V100`.

## Use instead
```json
{"output_dir": "out", "fp16": true}
```

## Fix safety
No fix: whether to delete the setting or keep it for other GPUs the same config also runs on is the user's
call.

## References
- PyTorch TF32 notes: https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
- `torch.set_float32_matmul_precision`:
  https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html
- Transformers `TrainingArguments.tf32`: https://huggingface.co/docs/transformers/main_classes/trainer
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

if TYPE_CHECKING:
    from precisionlint.hardware.gpu import Gpu

CODE = "PL303"
NAME = "tf32-unsupported-gpu"
SEVERITY = Severity.INFO
SUMMARY = "A TF32 setting for a GPU without TF32 (before Ampere): no effect, or a ValueError in Transformers."
TARGET = "settings"
READS = "hf, trainer_config, torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"tf32", b"fp32_precision", b"precision")
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True


def _hf_accepts(gpu: Gpu) -> bool:
    # transformers' is_torch_tf32_available(): a CUDA build of torch and compute capability >= 8.
    return gpu.vendor == "nvidia" and gpu.compute_capability is not None and gpu.compute_capability >= (8, 0)


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._accelerator import elsewhere_scopes
    from precisionlint.checks._gpu import framework_label, names, shown, targets

    gpus = targets(ctx)
    elsewhere = elsewhere_scopes(ctx)  # beside a Lightning `accelerator="tpu"` (or "hpu", "mps")
    for setting in ctx.settings:
        if not setting.resolved or setting.scope in elsewhere:
            continue
        if setting.name == "tf32" and setting.framework == "hf" and setting.value is True:
            rejecting = [g for g in gpus if not _hf_accepts(g)]
            if rejecting:
                yield ctx.report(
                    setting.span,
                    f"Transformers {shown(setting)} raises ValueError on {names(rejecting)}: it requires an "
                    "Ampere or newer NVIDIA GPU (compute capability 8.0+) and a CUDA build of torch; remove it",
                    severity=Severity.ERROR,
                )
        elif setting.name == "tf32_matmul_precision" and setting.value in ("high", "medium"):
            lacking = [g for g in gpus if not g.tf32]
            if lacking:
                yield ctx.report(
                    setting.span,
                    f"{framework_label(setting)} {shown(setting)} has no effect on {names(lacking)}, which "
                    f"{'has' if len(lacking) == 1 else 'have'} no TF32: float32 matmuls stay full IEEE float32",
                )
    yield from _script_writes(ctx, [g for g in gpus if not g.tf32])


def _script_writes(ctx: CheckContext, lacking: list[Gpu]) -> Iterator[Finding]:
    """The script's own TF32 switches (`torch.backends.cuda.matmul.allow_tf32 = True`, `fp32_precision = "tf32"`)
    from the script model's TF32 state. `set_float32_matmul_precision` arrives as a setting above; a switch under
    a compute-capability test is the author handling older GPUs already."""
    from precisionlint.checks._gpu import names

    if not lacking or ctx.document.format != "python":
        return
    text = ctx.document.text
    if "allow_tf32" not in text and "fp32_precision" not in text:
        return
    from precisionlint.script.tf32 import SETTER, mentions_capability

    for write in ctx.script.tf32_writes:
        if write.enables is not True or write.api == SETTER or write.backend not in ("matmul", "cudnn", "all"):
            continue
        if any(mentions_capability(test) for test, _ in write.gates):
            continue
        which = "convolutions" if write.backend == "cudnn" else "matmuls"
        yield ctx.report(
            write.span,
            f"`{write.text}` has no effect on {names(lacking)}, which {'has' if len(lacking) == 1 else 'have'} "
            f"no TF32: float32 {which} stay full IEEE float32",
        )
