"""## What it does
Finds a DeepSpeed config that accumulates gradients in 16 bits (`"data_types": {"grad_accum_dtype": "bf16"}` or
`"fp16"`) over more than one micro-batch (`gradient_accumulation_steps` a number above 1).

## Why is this bad?
Accumulating is adding: each micro-batch's gradient is added to a running sum held in `grad_accum_dtype`. In
bfloat16 (8 significant bits) a sum drops every addend smaller than 2**-9 of itself, so with many steps the
later micro-batches count less than the earlier ones, or not at all; float16 keeps 11 bits but overflows above
65504. DeepSpeed reads the key in `get_data_types` (unset, it is the model's dtype) and warns where it builds
its BF16 optimizer for bf16 accumulation under pipeline parallelism: "BF16 gradient accumulation is not safe
numerically with large number of accumulation steps, proceed with caution" (`_do_optimizer_sanity_check`).
`"fp32"` is the float32 choice under ZeRO (with bf16 at ZeRO stage 1 and no offload DeepSpeed then picks its
BF16 optimizer, which accumulates in float32); without ZeRO a `grad_accum_dtype` other than the model's dtype
is refused ("unsupported mix of model_dtype=... and grad_accum_dtype=...").

## Example
```json
{
  "bf16": {"enabled": true},
  "gradient_accumulation_steps": 16,
  "data_types": {"grad_accum_dtype": "bf16"}
}
```

## Use instead
```json
{
  "bf16": {"enabled": true},
  "gradient_accumulation_steps": 16,
  "zero_optimization": {"stage": 1},
  "data_types": {"grad_accum_dtype": "fp32"}
}
```

## Fix safety
No fix: float32 accumulation buffers cost memory (twice that of bf16 gradients).

## References
- `get_data_types` (unset means the model's dtype), `deepspeed/runtime/engine.py` lines 1444-1455 at v0.19.5:
  https://github.com/deepspeedai/DeepSpeed/blob/v0.19.5/deepspeed/runtime/engine.py#L1444-L1455
- `_do_optimizer_sanity_check`: bf16 + fp32 at ZeRO stage 1 picks the BF16 optimizer (lines 1950-1952), the
  warning (lines 1970-1974), the refused mix (line 1977), same file and tag:
  https://github.com/deepspeedai/DeepSpeed/blob/v0.19.5/deepspeed/runtime/engine.py#L1934-L1977
- The BF16 optimizer takes `grad_acc_dtype` from it (line 2309):
  https://github.com/deepspeedai/DeepSpeed/blob/v0.19.5/deepspeed/runtime/engine.py#L2301-L2311
- bfloat16 keeps 8 significant bits (`torch.finfo(torch.bfloat16).eps` = 2**-7), float16 11 (eps 2**-10, max
  65504): https://docs.pytorch.org/docs/stable/type_info.html
- https://www.deepspeed.ai/docs/config-json/ (`data_types.grad_accum_dtype`)
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import hedge
from precisionlint.core.model import Finding, Related, Setting, Severity

CODE = "PL108"
NAME = "low-precision-grad-accumulation"
SEVERITY = Severity.WARNING
SUMMARY = "DeepSpeed accumulates gradients in bf16/fp16 over several micro-batches: small gradients are lost."
TARGET = "settings"
READS = "deepspeed"

_BITS = {"bf16": "bfloat16 keeps 8 significant bits", "fp16": "float16 keeps 11 significant bits and overflows "
         "above 65504"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    by_scope: dict[str, dict[str, Setting]] = {}
    for setting in ctx.settings:
        if setting.framework == "deepspeed":
            by_scope.setdefault(setting.scope, {})[setting.name] = setting
    for named in by_scope.values():
        dtype, steps = named.get("grad_accum_dtype"), named.get("gradient_accumulation_steps")
        if dtype is None or steps is None or not isinstance(dtype.value, str):
            continue
        value = dtype.value.lower()
        if value not in _BITS or isinstance(steps.value, bool) or not isinstance(steps.value, int):
            continue
        if steps.value <= 1:
            continue
        yield ctx.report(
            dtype.span,
            f"gradients are accumulated in {value} over {steps.value} micro-batches (line {steps.span.line}): "
            f"{_BITS[value]}, so gradients much smaller than the running sum are rounded away; use "
            f"\"grad_accum_dtype\": \"fp32\"{hedge(dtype, 'DeepSpeed')}",
            related=(Related("", steps.span, "gradient_accumulation_steps"),),
        )
