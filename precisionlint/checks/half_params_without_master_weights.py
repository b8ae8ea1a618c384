"""## What it does
Finds a model cast to float16 or bfloat16 (`model.half()`, `.bfloat16()`, `.to(torch.float16)`,
`.to(dtype=torch.bfloat16)`) whose parameters are handed to a `torch.optim` optimizer in the same scope
(the same function, the module level, or the methods of one class for `self.model`). Optimizers passed
straight into a wrapper (`FP16_Optimizer(torch.optim.Adam(...))`) and files using DeepSpeed or apex, which keep
float32 master weights themselves, are not reported; neither is a model also cast back with `.float()`,
nor a cast in an `if` branch that leaves the function (`return`, `raise`, `sys.exit()`) without stepping,
backpropagating or naming the optimizer: an inference or export path, which no step of the optimizer follows.

## Why is this bad?
Mixed-precision training keeps the weights in float32 and computes in 16 bits (autocast). After `.half()`
the weights themselves are 16-bit and the optimizer adds each update to them in 16 bits: an update smaller
than half the spacing between neighbouring values is rounded away, which is 2**-11 of a weight's magnitude in
float16 and 2**-8 (about 0.4%) in bfloat16. With learning rates of 1e-4 and below most updates vanish, so
training slows down or stalls and ends at a worse loss than the same run in mixed precision (some short runs
with larger learning rates still converge); float16 weights also overflow above 65504. This is "pure"
half-precision training, useful for inference or with optimizers built for it (Kahan summation, stochastic
rounding), rarely what was meant.

In test code (`tests/`, `test_*.py`, `conftest.py`) the finding is informational: a test runs a step to check
the mechanics, not to train a model.

## Example
```python
model = Net().cuda().half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
```

## Use instead
```python
model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
```

## Fix safety
No fix: float32 weights double the parameter memory, which may not fit.

## References
- https://pytorch.org/docs/stable/amp.html
- Micikevicius et al., Mixed Precision Training (float32 master weights): https://arxiv.org/abs/1710.03740
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.model import Finding, Severity

CODE = "PL210"
NAME = "half-params-without-master-weights"
SEVERITY = Severity.WARNING
SUMMARY = "An optimizer updates float16/bfloat16 parameters directly, with no float32 master weights."
TARGET = "script"
READS = "torch"

_LOST = {"float16": "2**-11", "bfloat16": "2**-8 (~0.4%)"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    in_tests = is_test_code(ctx.document.path)
    if model.frameworks & {"deepspeed", "apex"}:
        return
    for optimizer in model.optimizers:
        if optimizer.wrapped:
            continue
        casts = model.casts_of(optimizer, ("float16", "bfloat16"))
        if not casts:
            continue
        cast = casts[0]
        yield ctx.report(
            optimizer.span,
            f"`{optimizer.cls}` updates the {cast.dtype} parameters of `{cast.text}` (cast on line {cast.span.line}) "
            f"with no float32 master copy: updates below {_LOST[cast.dtype]} of a weight are rounded away, "
            "which can stall training or leave it at a worse loss; keep the model in float32 and use autocast for "
            "16-bit compute",
            severity=Severity.INFO if in_tests else None,
        )
