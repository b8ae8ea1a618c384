"""## What it does
Finds Lightning's "true" half precision: `precision: "16-true"` (warning) or `"bf16-true"` (info).

## Why is this bad?
With `-true`, Lightning casts the weights themselves to 16 bits, so the optimizer updates half-precision
weights and keeps half-precision state; there is no float32 master copy. An update smaller than half the
spacing between two representable values is rounded away: bfloat16 has 8 bits of significand, so an update
below about 0.4% of a weight's magnitude (2**-8) is lost; float16 keeps 11 bits (2**-11) but
also overflows above 65504 and underflows below about 6e-8, with no loss scaling under `16-true`. Long training
runs stall or diverge where `"bf16-mixed"` / `"16-mixed"` would not. It suits inference, or fine-tuning a model too
large for float32 weights when the learning rate and optimizer (e.g. Kahan summation, stochastic rounding)
are chosen for it; float16-true is a warning because it is the least forgiving.

## Example
```yaml
trainer:
  precision: bf16-true
```

## Use instead
```yaml
trainer:
  precision: bf16-mixed
```

## Fix safety
No fix: switching to mixed precision doubles the weight memory, which may not fit.

## References
- Lightning "true half precision": https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
- Micikevicius et al., Mixed Precision Training (float32 master weights): https://arxiv.org/abs/1710.03740
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.frameworks import precision_mode
from precisionlint.model import Finding, Severity

CODE = "PL107"
NAME = "true-half-precision-training"
SEVERITY = Severity.WARNING
SUMMARY = "Weights and optimizer state in half precision, with no float32 master copy."
TARGET = "settings"


def check(ctx: CheckContext) -> Iterator[Finding]:
    for setting in ctx.settings:
        if setting.name != "precision":
            continue
        mode = precision_mode(setting)
        if mode is None or mode.kind != "true" or mode.dtype not in ("fp16", "bf16"):
            continue
        if mode.dtype == "fp16":
            yield ctx.report(
                setting.span,
                f"precision={setting.value!r} trains float16 weights with no float32 master copy and no loss scaling: "
                "small updates round away and gradients under/overflow; use '16-mixed' or 'bf16-mixed' for training",
            )
        else:
            yield ctx.report(
                setting.span,
                f"precision={setting.value!r} keeps weights and optimizer state in bfloat16 with no float32 master "
                "copy: updates below ~0.4% of a weight are rounded away; use 'bf16-mixed' unless memory forces this",
                severity=Severity.INFO,
            )
