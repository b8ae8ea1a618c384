"""## What it does
Finds a fixed loss scale where dynamic scaling is available:
- a DeepSpeed `fp16` block with a `loss_scale` greater than zero (DeepSpeed configs, and the DeepSpeed blocks of a
  TrainingArguments file, an Accelerate `deepspeed_config:` or a GPT-NeoX config);
- MMEngine's `optim_wrapper = dict(type="AmpOptimWrapper", loss_scale=512.)`: a float is a static scale (the
  wrapper resets the GradScaler to it after every step), and an int raises `TypeError` when the wrapper is built.

## Why is this bad?
In DeepSpeed, `loss_scale: 0` (the default) means dynamic loss scaling: the scale starts at
`2**initial_scale_power` and is halved on overflow and raised after `loss_scale_window` clean steps. Any
positive value switches that off and multiplies the loss by that constant for the whole run. Too small, and
small float16 gradients underflow to zero; too large, and gradients overflow to inf and those steps are
skipped for good, because a static scale never backs off. `loss_scale: 1` means no loss scaling at all:
float16 gradients below about 6e-8 become zero. A static scale is a tuning decision from the apex era; with
dynamic scaling the model finds a working scale by itself.

## Example
```json
{"fp16": {"enabled": true, "loss_scale": 128}}
```

## Use instead
```json
{"fp16": {"enabled": true, "loss_scale": 0, "initial_scale_power": 16}}
```

## Fix safety
Unsafe: the fix sets `loss_scale` to 0 (DeepSpeed) or `'dynamic'` (MMEngine), which changes the numerics of the
run.

## References
- DeepSpeed fp16 options: https://www.deepspeed.ai/docs/config-json/#fp16-training-options
- DeepSpeed source, `deepspeed/runtime/precision_config.py`
- MMEngine source, `mmengine/optim/optimizer/amp_optimizer_wrapper.py` (`AmpOptimWrapper.__init__`, `step`)
- Micikevicius et al., Mixed Precision Training: https://arxiv.org/abs/1710.03740
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import at_most_warning, hedge
from precisionlint.core.model import Finding, Setting, Severity
from precisionlint.sources.setting_edits import replace_value

CODE = "PL106"
NAME = "static-loss-scale"
SEVERITY = Severity.WARNING
SUMMARY = "A fixed loss scale instead of dynamic scaling (DeepSpeed fp16 loss_scale, MMEngine AmpOptimWrapper)."
TARGET = "settings"
READS = "deepspeed, mmengine"
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    enabled = {s.scope for s in ctx.settings if s.name == "fp16" and s.framework == "deepspeed"
               and s.value in (True, "auto")}
    for setting in ctx.settings:
        if setting.name != "loss_scale":
            continue
        if setting.framework == "mmengine":
            finding = _mmengine(ctx, setting)
            if finding is not None:
                yield finding
            continue
        if setting.scope not in enabled:
            continue
        value = setting.value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            continue
        fix = replace_value(ctx.document, setting, 0, "Use dynamic loss scaling (loss_scale: 0)", safe=False)
        if value == 1:
            message = ("loss_scale 1 disables loss scaling entirely: float16 gradients below ~6e-8 flush to zero. "
                       "Use 0 for dynamic loss scaling")
        else:
            message = (f"static loss_scale {_shown(value)}: gradients that overflow at this scale are skipped for the "
                       "whole run and small ones may underflow; use 0 for dynamic loss scaling")
        yield ctx.report(setting.span, message + hedge(setting, "DeepSpeed"), fix=fix)


def _shown(value: float) -> str:
    """The scale as %g shows it; an integer too large for a float (1 followed by 400 zeros) as a power of ten."""
    try:
        return f"{value:g}"
    except OverflowError:
        digits = str(value)
        return f"{digits[0]}.{digits[1:3]}e+{len(digits) - 1}"


def _mmengine(ctx: CheckContext, setting: Setting) -> Finding | None:
    """AmpOptimWrapper(loss_scale=...): "dynamic", a dict of GradScaler arguments, or a float - a static scale,
    since the wrapper calls `GradScaler.update(loss_scale)` every step. Any other type raises TypeError."""
    value = setting.value
    if not setting.resolved or isinstance(value, (str, dict)) or value is None:
        return None
    fix = replace_value(ctx.document, setting, "dynamic", "Use dynamic loss scaling (loss_scale='dynamic')",
                        safe=False)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return ctx.report(
            setting.span,
            f"AmpOptimWrapper raises TypeError for loss_scale={value!r} (an int): it takes 'dynamic', a dict of "
            f"GradScaler arguments or a float, and a float means a static scale; use 'dynamic'",
            fix=fix, severity=at_most_warning(setting, Severity.ERROR),
        )
    return ctx.report(
        setting.span,
        f"static loss_scale {_shown(value)}: AmpOptimWrapper resets the GradScaler to this scale after every step, "
        "so overflowing steps are skipped for the whole run and small gradients may underflow; use 'dynamic'",
        fix=fix,
    )
