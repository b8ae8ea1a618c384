"""## What it does
Finds `scaler.step(optimizer)` with no `scaler.update()` after it in the same loop or function. An update in
another method of the same class (for a `self.scaler`), or anywhere in the file for a module-level scaler,
counts; a scaler that is only a parameter, or is passed to another function, is not checked.

## Why is this bad?
`scaler.update()` adjusts the loss scale (halving it after an overflow, growing it after 2000 clean steps)
and resets the per-optimizer state. Without it the scale never adapts, and the next `scaler.step()` on the
same optimizer raises `RuntimeError: step() has already been called since the last update().`

## Example
```python
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    optimizer.zero_grad()
```

## Use instead
```python
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
```

## Fix safety
No fix: with several optimizers, `update()` belongs after the last `step`, which only the author knows.

## References
- https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.update
- https://pytorch.org/docs/stable/notes/amp_examples.html#working-with-multiple-models-losses-and-optimizers
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

if TYPE_CHECKING:
    from precisionlint.script.model import Event, GradScalerInfo

CODE = "PL206"
NAME = "missing-scaler-update"
SEVERITY = Severity.ERROR
SUMMARY = "scaler.step() is never followed by scaler.update()."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"GradScaler", b".scale(")
# The model knows a GradScaler only by its construction, `x.scale(loss)` or `x.unscale_(optimizer)`: a name that
# merely says "scaler" (a Trainer's `scaler` property, a comment) gives it no scaler.
MODEL_WORDS: tuple[str, ...] = ("GradScaler", ".scale(", "unscale_")


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    for scaler in model.scalers.values():
        if not scaler.constructed or scaler.enabled is False or scaler.escapes:
            continue
        updates = _Updates([e for e in scaler.events if e.kind == "scaler_update"])
        for step in (e for e in scaler.events if e.kind == "scaler_step"):
            if updates.after(step) or not _owned_here(scaler, step, updates):
                continue
            yield ctx.report(
                step.span,
                f"`{step.scaler_text}.step(...)` is never followed by `{step.scaler_text}.update()` in this loop or "
                f"function; call `{step.scaler_text}.update()` once per iteration after the last step"
                '\nthe loss scale never adapts, and the next step raises RuntimeError ("step() has already been '
                'called since the last update()")',
                severity=None if scaler.enabled is True else Severity.WARNING,
            )


class _Updates:
    """A scaler's `update()` calls, indexed so that each step is answered in constant time (a file with
    thousands of steps stays linear)."""

    def __init__(self, updates: list[Event]) -> None:
        self.count = len(updates)
        self.scopes: set[int] = {id(u.scope) for u in updates}
        self.last: dict[int, int] = {}  # id(scope) -> order of its last update
        self.loops: set[int] = set()  # id of every loop that holds an update
        for update in updates:
            key = id(update.scope)
            self.last[key] = max(self.last.get(key, update.order), update.order)
            self.loops.update(id(loop) for loop in update.loops)

    def after(self, step: Event) -> bool:
        last = self.last.get(id(step.scope))
        if last is None:
            return False
        if last > step.order:
            return True
        # earlier in the same loop body: it runs after this step on the next iteration (loops are per function)
        return any(id(loop) in self.loops for loop in step.loops)


def _owned_here(scaler: GradScalerInfo, step: Event, updates: _Updates) -> bool:
    """Whether the missing update cannot be somewhere this file does not show."""
    if scaler.owner_class is not None:
        return updates.scopes <= {id(step.scope)}  # another method may update it
    if scaler.local_to is not None:
        return scaler.local_to is step.scope  # a local built elsewhere reached here as a parameter
    return not updates.count  # module-level: any update in the file may be the one
