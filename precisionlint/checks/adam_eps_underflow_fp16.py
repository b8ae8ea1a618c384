"""## What it does
Finds an optimizer of the Adam family (`Adam`, `AdamW`, `NAdam`, `RAdam`, `Adamax`, `SparseAdam`) or
`Adagrad` / `RMSprop` whose `eps`, written or default (1e-8; Adagrad 1e-10), is below float16's smallest
positive value, 2**-24 ≈ 5.96e-8, while it updates float16 parameters (`model.half()`,
`.to(torch.float16)`). `fused=True` (which computes in float32) is not reported. Transformers' own `AdamW`
(`from transformers import AdamW`, removed in later releases) computes in the parameters' dtype too; its default
eps is 1e-6, so only an eps written below 5.96e-8 is reported. bitsandbytes' and apex's optimizers keep their
state in float32 (or 8-bit blocks with float32 scales) and compute the update in float32: not reported.

## Why is this bad?
These optimizers keep their state in the parameters' dtype and divide by `sqrt(state) + eps`, computed in that
dtype (`torch/optim/adam.py`: `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`). In float16 an eps at or
below 2**-25 rounds to exactly 0; the second-moment estimate of a parameter with tiny gradients underflows to
0 too, and the update divides by zero: inf or NaN weights. (An eps between 2**-25 and 2**-24 is rounded up
to 5.96e-8, which changes nothing dangerous: that case is informational.) Adagrad and RMSprop add eps to the
square root of their float16 state the same way.

In test code (`tests/`, `test_*.py`, `conftest.py`) the finding is informational: a test runs a step to check
the mechanics, not to train a model.

## Example
```python
model = Net().cuda().half()
optimizer = torch.optim.Adam(model.parameters())  # eps=1e-8 rounds to 0 in float16
```

## Use instead
```python
model = Net().cuda()  # float32 weights, float16 compute under autocast with a GradScaler
optimizer = torch.optim.Adam(model.parameters())
```
or, if the weights must stay in float16, `torch.optim.Adam(model.parameters(), eps=1e-4)`.

## Fix safety
No fix: eps changes the optimizer's behaviour; 1e-4 is a common float16 choice, not a universal one.

## References
- https://pytorch.org/docs/stable/generated/torch.optim.Adam.html
- IEEE 754 binary16: smallest subnormal 2**-24 ≈ 5.96e-8
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Finding, Severity

CODE = "PL211"
NAME = "adam-eps-underflow-fp16"
SEVERITY = Severity.ERROR
SUMMARY = "Optimizer eps below float16's smallest value rounds to zero over float16 parameters."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"half", b"float16")

_SMALLEST = 2.0**-24  # float16's smallest subnormal
_ROUNDS_TO_ZERO = 2.0**-25  # half of it: round-to-nearest-even sends this and anything smaller to 0


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    if model.frameworks & {"deepspeed", "apex"}:
        return  # their optimizers keep float32 master weights and state
    for optimizer in model.optimizers:
        if (optimizer.eps is None or optimizer.eps >= _SMALLEST or optimizer.fused is True or optimizer.wrapped
                or optimizer.float32_state):
            continue
        casts = model.casts_of(optimizer, ("float16",))
        if not casts:
            continue
        cast = casts[0]
        written = "" if optimizer.eps_explicit else "default "
        span = optimizer.eps_span or optimizer.span
        if optimizer.eps <= _ROUNDS_TO_ZERO:
            yield ctx.report(
                span,
                f"`{optimizer.cls}` {written}eps={optimizer.eps:g} rounds to 0 in float16, and it updates the "
                f"float16 parameters of `{cast.text}` (cast on line {cast.span.line}): where the second-moment state "
                "underflows the update divides by zero (inf/NaN weights); keep the parameters in float32 or use "
                "eps=1e-4",
                severity=Severity.INFO if is_test_code(ctx.document.path) else None,
            )
        else:
            yield ctx.report(
                span,
                f"`{optimizer.cls}` {written}eps={optimizer.eps:g} is below float16's smallest value and runs as "
                f"5.96e-08 over the float16 parameters of `{cast.text}` (cast on line {cast.span.line}); write the "
                "eps that actually applies, or keep the parameters in float32",
                severity=Severity.INFO,
            )
