"""## What it does
Finds a backward call (`loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
`torch.autograd.backward(...)`) written inside an enabled autocast block or an `@autocast(...)`-decorated
function. A backward under a nested `autocast(enabled=False)` is not reported, and neither is
`ctx.save_for_backward(...)`. When the autocast's `enabled=` is computed, the finding is informational.

## Why is this bad?
PyTorch's autocast documentation says to wrap only the forward pass and the loss computation: "Backward
passes under autocast are not recommended." Backward ops already run in the dtype autocast chose for their
forward ops; keeping the region open only applies autocast to whatever else runs during backward (custom
autograd functions, hooks, gradient penalties), in a dtype you did not choose for them.

In test code (`tests/`, `test_*.py`, `conftest.py`) the finding is informational: a test runs a step to check
the mechanics, not to train a model.

## Example
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
    loss.backward()
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
loss.backward()
```

## Fix safety
No fix: moving the call out of the block can change which statements run under autocast.

## References
- https://pytorch.org/docs/stable/amp.html#torch.autocast
- https://pytorch.org/docs/stable/notes/amp_examples.html
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Finding, Severity

CODE = "PL203"
NAME = "backward-inside-autocast"
SEVERITY = Severity.WARNING
SUMMARY = "A backward call runs inside an autocast region."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast",)
MODEL_WORDS: tuple[str, ...] = ("autocast",)


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    in_tests = is_test_code(ctx.document.path)
    for event in model.backward_calls:
        use = event.autocast
        if use is None or use.region.enabled is False:
            continue
        if use.kind == "with":
            where, remedy = f"the autocast block opened on line {use.node.lineno}", "move this call after the block"
        else:
            where = f"a function decorated with autocast (line {use.region.line})"
            remedy = "call backward from outside the decorated function"
        yield ctx.report(
            event.span,
            f"backward runs inside {where}; {remedy}"
            "\nPyTorch recommends exiting autocast before backward: backward ops already use the dtypes autocast "
            "chose for the forward",
            severity=None if use.region.enabled is True and not in_tests else Severity.INFO,
        )
