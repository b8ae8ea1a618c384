"""## What it does
Finds `torch.nn.functional.binary_cross_entropy(...)` or a `torch.nn.BCELoss` module called inside a CUDA
autocast region (a `with` block or an `@autocast(...)` function). The module may be built elsewhere
(`self.criterion = nn.BCELoss()` in `__init__`); what counts is where it is called. With an unknown device the
finding is a warning; CPU autocast allows these ops and is not reported.

## Why is this bad?
PyTorch raises `RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to
autocast.` as soon as the line runs under CUDA autocast. The backward of BCE can produce gradients that are
not representable in float16, and casting its inputs to float32 would not help because the cast is reversed in
backward, so autocast bans the op instead of guessing.

## Example
```python
with torch.autocast("cuda", dtype=torch.float16):
    prob = torch.sigmoid(model(x))
    loss = F.binary_cross_entropy(prob, y)
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.float16):
    logits = model(x)
    loss = F.binary_cross_entropy_with_logits(logits, y)  # or nn.BCEWithLogitsLoss()
```

## Fix safety
No fix: the model must return logits instead of probabilities, which only the author can change.

## References
- https://pytorch.org/docs/stable/amp.html#prefer-binary-cross-entropy-with-logits-over-binary-cross-entropy
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL212"
NAME = "bce-inside-autocast"
SEVERITY = Severity.ERROR
SUMMARY = "binary_cross_entropy / BCELoss inside CUDA autocast raises at run time."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast",)
MODEL_WORDS: tuple[str, ...] = ("autocast",)


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    for event in model.events_of("bce"):
        use = event.autocast
        if use is None:
            continue
        region = use.region
        if region.device not in (None, "cuda") or region.enabled is False:
            continue
        definite = region.device == "cuda" and region.enabled is True
        yield ctx.report(
            event.span,
            f"binary_cross_entropy / BCELoss inside the autocast region of line {region.line} raises RuntimeError "
            '("unsafe to autocast") under CUDA autocast, because its gradients may not fit float16; return logits '
            "and use binary_cross_entropy_with_logits / BCEWithLogitsLoss",
            severity=None if definite else Severity.WARNING,
        )
