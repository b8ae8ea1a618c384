"""## What it does
Finds autocast on CUDA without a `dtype` argument: `torch.autocast("cuda")`, `torch.amp.autocast("cuda")`,
`torch.cuda.amp.autocast()`. The message says what runs: float16.

## Why is this bad?
With no `dtype`, CUDA autocast uses float16 (CPU autocast uses bfloat16). That is a consequential choice left
implicit: float16 needs a `GradScaler` for training (its gradients underflow below ~6e-8) and overflows above
65504, while bfloat16, on GPUs with compute capability 8.0 or newer, needs neither. Readers (and reviewers
moving the script to CPU, where the default changes) cannot tell which one was meant.

## Example
```python
with torch.autocast("cuda"):
    loss = criterion(model(x), y)
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.bfloat16):  # or dtype=torch.float16 with a GradScaler
    loss = criterion(model(x), y)
```

Only autocast regions that train are reported: a loss computed under the region reaches a backward call in
the same file. Sampling, validation and evaluation run float16 autocast on purpose and need no scaler.

## Fix safety
No fix: only the author knows which dtype the hardware and the training recipe call for.

## References
- https://pytorch.org/docs/stable/amp.html#torch.autocast
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL209"
NAME = "implicit-autocast-dtype"
SEVERITY = Severity.INFO
SUMMARY = "CUDA autocast without dtype= silently runs float16."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast",)
MODEL_WORDS: tuple[str, ...] = ("autocast",)


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    training = {id(region) for event in model.events if event.kind in _BACKWARDS for region in event.reached}
    for region in model.autocast_regions:
        if id(region) not in training:
            continue
        if region.device != "cuda" or region.dtype_explicit or region.unpacked or region.form != "call":
            continue
        if region.enabled is False:
            continue
        yield ctx.report(
            region.span,
            "autocast on cuda without dtype= runs float16; write dtype=torch.float16 to make that explicit, or "
            "dtype=torch.bfloat16 on compute capability 8.0+ GPUs"
            "\nfloat16 needs a GradScaler for training and overflows above 65504",
        )


_BACKWARDS = ("backward", "scaled_backward", "framework_backward")
