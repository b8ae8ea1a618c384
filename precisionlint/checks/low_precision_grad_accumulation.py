"""## What it does
Finds a DeepSpeed config that accumulates gradients in 16 bits (`"data_types": {"grad_accum_dtype": "bf16"}` or
`"fp16"`) over more than one micro-batch (`gradient_accumulation_steps` a number above 1).

## Why is this bad?
Accumulating is adding: each micro-batch's gradient is added to a running sum held in `grad_accum_dtype`. In
bfloat16 (8 significant bits) a sum drops every addend smaller than 2**-9 of itself, so with many steps the
later micro-batches count less than the earlier ones, or not at all; float16 keeps 11 bits but overflows above
65504. DeepSpeed says so itself when it takes this path: "BF16 gradient accumulation is not safe numerically
with large number of accumulation steps, proceed with caution" (`deepspeed/runtime/engine.py`,
`_do_optimizer_sanity_check`). `"fp32"` accumulates in float32 whatever the model's dtype (with bf16 and ZeRO
stage 1 DeepSpeed then picks its BF16 optimizer, which keeps float32 gradients).

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
  "data_types": {"grad_accum_dtype": "fp32"}
}
```

## Fix safety
No fix: float32 accumulation buffers cost memory (twice that of bf16 gradients).

## References
- https://github.com/deepspeedai/DeepSpeed/blob/master/deepspeed/runtime/engine.py (`get_data_types`,
  `_do_optimizer_sanity_check`)
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
