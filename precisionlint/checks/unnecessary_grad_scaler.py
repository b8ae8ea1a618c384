"""## What it does
Finds a `GradScaler` that is always enabled (no `enabled=`, or `enabled=True`) while every autocast region
whose loss it scales runs bfloat16.

A scaler whose `enabled=` is computed (`GradScaler(enabled=(dtype == "float16"))`, nanoGPT's pattern) is the
right way to share one loop between float16 and bfloat16 and is not reported.

## Why is this bad?
Loss scaling exists because float16 gradients underflow below ~6e-8. bfloat16 has the same 8-bit exponent as
float32, so its gradients do not underflow and need no scaling. With bfloat16 autocast and float32
parameters the scaler is not harmful, only overhead: every step multiplies the loss, checks all gradients for
inf/NaN (a device synchronization) and unscales them. Hugging Face Transformers and Accelerate removed it for
bf16, and Lightning refuses a scaler with `bf16-mixed`. (With bfloat16 *parameters*, `unscale_` is not even
implemented for that dtype.)

## Example
```python
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
loss.backward()
optimizer.step()
```
or `scaler = torch.amp.GradScaler("cuda", enabled=(dtype == torch.float16))`.

## Fix safety
No fix: removing the scaler means rewriting the backward and step calls.

## References
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
- https://github.com/huggingface/transformers/pull/21428
- https://github.com/huggingface/accelerate/pull/1036
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.model import Finding, Severity

if TYPE_CHECKING:
    from precisionlint.script.model import AutocastRegion

CODE = "PL202"
NAME = "unnecessary-grad-scaler"
SEVERITY = Severity.WARNING
SUMMARY = "An always-enabled GradScaler serves only bfloat16 autocast: pure overhead."
TARGET = "script"


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    for scaler in model.scalers.values():
        if not scaler.constructed or scaler.span is None or scaler.enabled is not True or scaler.conditional:
            continue
        served: set[AutocastRegion] = set()
        for event in scaler.events:
            if event.kind in ("scaled_backward", "backward"):  # backward: `loss = scaler.scale(loss)` first
                served |= event.reached
        regions = sorted(served, key=lambda r: r.span)
        active = [r for r in regions if r.enabled is not False]
        if not active or any(r.dtype != "bfloat16" for r in active):
            continue
        lines = ", ".join(str(r.line) for r in active)
        yield ctx.report(
            scaler.span,
            f"`{scaler.text}` is always enabled but only scales losses from bfloat16 autocast (line {lines}), which "
            "has float32's exponent range and needs no loss scaling: with float32 parameters it is pure overhead "
            "(an inf/NaN check and unscale every step), not an error; drop it or pass "
            "`enabled=(dtype == torch.float16)`",
        )
