"""## What it does
Finds `torch.autocast(...)` and `torch.amp.autocast(...)` called without `device_type` (no positional argument
and no `device_type=` keyword), in a `with`, a decorator or an assignment. The deprecated
`torch.cuda.amp.autocast(...)` takes no device and is not reported here (see deprecated-amp-api). Calls that
pass `**kwargs` or `*args`, and `functools.partial(torch.autocast, ...)` (the device may come at the call), are
not reported.

## Why is this bad?
`device_type` is the first, required parameter of `torch.autocast(device_type, dtype=None, enabled=True,
cache_enabled=None)`. Without it the call raises `TypeError: ... missing 1 required positional argument:
'device_type'` when the line runs, which may be deep into a job (an evaluation that runs after the first
epoch), after the time it took to get there.

## Example
```python
with torch.autocast(dtype=torch.bfloat16):
    loss = criterion(model(x), y)
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
```

## Fix safety
The fix inserts `"cuda"` as the first argument. It is unsafe: the script may be meant for another device
(`"cpu"`, `"xpu"`, `"mps"`), and the autocast dtype defaults differ per device.

## References
- https://pytorch.org/docs/stable/amp.html#torch.autocast
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Fix, Severity

CODE = "PL208"
NAME = "autocast-missing-device-type"
SEVERITY = Severity.ERROR
SUMMARY = "torch.autocast() without device_type raises TypeError at run time."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast",)
MODEL_WORDS: tuple[str, ...] = ("autocast",)
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.script.fixes import insert_first_argument
    from precisionlint.script.names import DEVICE_TYPE_AUTOCAST

    model = ctx.script
    for region in model.autocast_regions:
        if region.api not in DEVICE_TYPE_AUTOCAST or region.form != "call":
            continue
        if region.device_explicit or region.unpacked:
            continue
        edit = insert_first_argument(model.positions, region.call, '"cuda"')
        fix = Fix('Pass "cuda" as device_type', "unsafe", (edit,)) if edit is not None else None
        yield ctx.report(
            region.span,
            f"`{region.api}(...)` is missing its required first argument `device_type` and raises TypeError when "
            'this line runs; pass the device, e.g. `torch.autocast("cuda", ...)`',
            fix=fix,
        )
