"""## What it does
Finds bf16 training (Lightning `"bf16-mixed"`, `"bf16-true"`, `"bf16"`; Transformers `bf16: true`; Accelerate
`mixed_precision: bf16`; DeepSpeed `bf16.enabled`; `torch.autocast("cuda", dtype=torch.bfloat16)` in scripts)
when a target GPU has no native bf16: NVIDIA GPUs below compute capability 8.0 (P100, V100, T4,
RTX 20xx).

Nothing is reported for a file written for another accelerator, which never runs on the target GPUs: a Python
module that imports `habana_frameworks`, `optimum.habana` or `torch_xla` at its top level (not under an `if` or
`try`), an Accelerate config whose `distributed_type` is XLA, MULTI_HPU, MULTI_XPU or another non-GPU type, a
setting beside a Lightning `accelerator` of "tpu", "hpu" or "mps", and the files of the optimum-habana project
(Transformers on Habana Gaudi; its DeepSpeed configs are written for Gaudi). A file that mentions CUDA, NVIDIA
or Accelerate's MULTI_GPU anywhere keeps its findings: it may run on the target GPUs too.
Nor for a file whose name names other GPU models and none of the targets: with `--gpu V100`, a project's
`a100_config.json` is the one it runs on A100s.

## Why is this bad?
These GPUs have no bf16 tensor cores. Current PyTorch still runs bf16 on them:
`torch.cuda.is_bf16_supported()` returns True because it counts emulation (pass
`including_emulation=False` for the real answer), and Transformers' bf16 check uses it, so nothing stops the
run. bf16 matmuls then go without the tensor-core speed-up: far slower than fp16 on the same GPU and
typically no faster than float32, while carrying bf16's coarse 8-bit significand. Older PyTorch versions
refuse outright ("Current CUDA Device does not support bfloat16").

On these GPUs, fp16 mixed precision with loss scaling is the fast 16-bit mode (V100: 125 TFLOP/s fp16
against 15.7 float32). On a fleet, the finding names the GPUs that lack bf16: the config must run well on every
one of them. For an autocast region in a file where nothing trains (no backward, optimizer step or
GradScaler: inference) the advice is float16 alone, with no loss to scale. In test code the finding is
information: a test picks bf16 to exercise it, not to train on the target GPUs. A file whose autocast
regions write both bfloat16 and float16 (a precision helper, `--bf16`/`--fp16` switches) offers both, and which
runs is chosen elsewhere: its regions are not reported. Handing out `torch.cuda.amp.autocast` uncalled (open_clip's
helper returns it for 'amp'), which its caller enters with CUDA's default float16, counts as writing float16.

All of this is about the target GPUs. Habana Gaudi, TPUs and Apple silicon have their own precision
support (Gaudi and TPUs compute natively in bf16), so for a file written for one of them the finding would be
false, which is why such files are left alone.

## Example
```yaml
# precisionlint check --gpu T4
trainer:
  precision: bf16-mixed
```

## Use instead
```yaml
trainer:
  precision: 16-mixed
```

## Fix safety
No fix: moving to fp16 needs loss scaling (a GradScaler in plain PyTorch) and can overflow where bf16 did not,
so the change needs a person.

## References
- `torch.cuda.is_bf16_supported`: https://pytorch.org/docs/stable/generated/torch.cuda.is_bf16_supported.html
- PyTorch AMP (fp16 with GradScaler): https://pytorch.org/docs/stable/amp.html
- CUDA GPUs and compute capabilities: https://developer.nvidia.com/cuda-gpus
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Finding, Severity

CODE = "PL302"
NAME = "bf16-unsupported-gpu"
SEVERITY = Severity.WARNING
SUMMARY = "bf16 on a GPU without native bf16 (below compute capability 8.0): emulated and slow."
TARGET = "settings"
READS = "any-framework, torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast", b"float16")  # torch.autocast(dtype=torch.bfloat16)
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._gpu import (
        INSTEAD,
        NO_FP16,
        autocast_uses,
        framework_label,
        instead,
        names,
        precision_settings,
        shown,
        targets,
    )

    lacking = [g for g in targets(ctx) if not g.bf16]
    if not lacking:
        return
    where = names(lacking)
    fast_fp16 = all(g.fast_fp16 for g in lacking)
    in_tests = is_test_code(ctx.document.path)  # settings and regions alike: a test exercises bf16 on purpose
    for setting, mode in precision_settings(ctx, reached=True):
        if mode.dtype != "bf16":
            continue
        if setting.framework in NO_FP16:
            alternative = f"use {instead(setting, 'fp32')} (its recipes refuse fp16)"
        elif fast_fp16:
            alternative = f"use {instead(setting, 'fp16')}" + (
                " (fp16 with loss scaling)" if setting.framework in INSTEAD else "")
        else:
            alternative = f"use {instead(setting, 'fp32')} (fp16 is not faster either on this GPU)"
        yield ctx.report(
            setting.span,
            f"bf16 ({framework_label(setting)} {shown(setting)}) on {where}, without native bf16: PyTorch "
            f"emulates it with no tensor-core speed-up; {alternative}",
            severity=Severity.INFO if in_tests else None,
            origin=setting.origin,
        )
    for use in autocast_uses(ctx):
        if use.dtype != "bf16":
            continue
        fp16 = all(g.fast_fp16 for g in lacking)
        if use.trains == "none":  # inference, or a helper: nothing here backpropagates
            advice = "use dtype=torch.float16" if fp16 else "compute in float32"
        else:
            advice = "use dtype=torch.float16 with a GradScaler" if fp16 else "train in float32"
        yield ctx.report(
            use.span,
            f"torch.autocast with dtype=bfloat16 on {where}, without native bf16: PyTorch emulates it with no "
            f"tensor-core speed-up; {advice}",
            severity=Severity.INFO if in_tests else None,
        )
