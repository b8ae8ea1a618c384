"""## What it does
Finds `optimizer.step()` called directly after `scaler.scale(loss).backward()`, on some path where no
`scaler.step(...)` ran in between. The common `if use_amp: scaler... else: loss.backward(); optimizer.step()`
shape is fine: each arm is checked on its own, and an arm where the scaler is known to be off is skipped.

## Why is this bad?
`scaler.scale(loss).backward()` leaves every gradient multiplied by the loss scale (65536 at the start).
`scaler.step(optimizer)` unscales them, skips the step when they contain inf/NaN, and records what
`scaler.update()` needs. Calling `optimizer.step()` instead applies updates tens of thousands of times too large
(unless `unscale_` ran) and never skips an overflowed step, so the first overflow writes inf/NaN into the
weights.

## Example
```python
scaler.scale(loss).backward()
optimizer.step()
```

## Use instead
```python
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
```

## Fix safety
No fix: the surrounding code decides whether `scaler.update()` must follow.

## References
- https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.step
- https://pytorch.org/docs/stable/notes/amp_examples.html
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL205"
NAME = "scaler-step-bypassed"
SEVERITY = Severity.ERROR
SUMMARY = "optimizer.step() is called directly after a scaled backward, bypassing scaler.step()."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"GradScaler", b".scale(")
# The model knows a GradScaler only by its construction, `x.scale(loss)` or `x.unscale_(optimizer)`: a name that
# merely says "scaler" (a Trainer's `scaler` property, a comment) gives it no scaler.
MODEL_WORDS: tuple[str, ...] = ("GradScaler", ".scale(", "unscale_")


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    for step in model.events_of("optimizer_step"):
        pending = sorted(k for k in step.pending_step if model.scalers[k].enabled is not False)
        if not pending:
            continue
        scaler = model.scalers[pending[0]]
        here = [e for e in scaler.events if e.scope is step.scope and e.order < step.order]
        backwards = [e for e in scaler.scaled_backwards() if e.scope is step.scope and e.order < step.order]
        backward = backwards[-1] if backwards else None
        text = backward.scaler_text if backward and backward.scaler_text else scaler.text
        unscaled = any(e.kind == "unscale" for e in here)
        optimizer = step.optimizer or "optimizer"
        effect = (
            "skips the inf/NaN check, so an overflowed step writes inf/NaN into the weights"
            if unscaled
            else "applies gradients still multiplied by the loss scale and skips the inf/NaN check"
        )
        after = f" (line {backward.span.line})" if backward else ""
        other = scaler.scaled_elsewhere(step) if backward is None else None
        if other is not None:
            after = f" (in `{other.scope.qualname}`, line {other.span.line})"
        yield ctx.report(
            step.span,
            f"`{optimizer}.step()` after the backward of a loss scaled by `{text}`{after} bypasses the GradScaler; "
            f"call `{text}.step({optimizer})` and then `{text}.update()` instead"
            f"\nit {effect}",
            severity=None if scaler.enabled is True else Severity.WARNING,
        )
