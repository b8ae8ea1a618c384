"""## What it does
Finds a TF32 setting (`tf32_matmul_precision = "high"` or `"medium"`) in the same `[trainer_config]` as a
mixed precision mode (`"16-mixed"`, `"bf16-mixed"`, or their legacy spellings).

Frameworks: the `[trainer_config]` factory table, whose `precision` goes to a Lightning Trainer and whose
`tf32_matmul_precision` is passed to `torch.set_float32_matmul_precision`.

## Why is this bad?
Under mixed precision, Lightning runs the forward pass and the loss inside `torch.autocast`, which already
casts every matmul and convolution to 16 bits. `set_float32_matmul_precision` only changes matmuls that still
run in float32: those your code runs outside autocast or with autocast disabled. For a standard
`LightningModule` it changes nothing measurable, and the config reads as if TF32 were part of the speed-up.
(It is often said that the setting is "ignored"; more exactly, it only reaches float32 matmuls outside
autocast.)

Two facts worth knowing when you remove it:
- On CUDA `"medium"` is the same as `"high"`: both mean TF32, because the CUDA backend has no bfloat16
  path for float32 matmuls (`"medium"` differs only on the CPU).
- Lightning prints its "You are using a CUDA device that has Tensor Cores" hint whenever the float32 matmul
  precision is `"highest"`, whatever the `precision` setting; that hint is not a reason to keep the setting.

## Example
```toml
[trainer_config]
precision = "bf16-mixed"
tf32_matmul_precision = "medium"
```

## Use instead
```toml
[trainer_config]
precision = "bf16-mixed"
```

## Fix safety
Safe: the fix removes the line. It is marked safe because under mixed precision every matmul Lightning runs
in the training and evaluation steps is under autocast. If your code deliberately runs float32 matmuls with
autocast disabled and wants TF32 for them, keep the setting and suppress this finding on that line.

## References
- Lightning precision: https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
- PyTorch TF32 notes: https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
- `torch.autocast`: https://pytorch.org/docs/stable/amp.html
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity
from precisionlint.frameworks import precision_mode
from precisionlint.sources.setting_edits import remove_entry

CODE = "PL104"
NAME = "tf32-ignored-under-mixed-precision"
SEVERITY = Severity.WARNING
SUMMARY = "A TF32 setting beside mixed precision, where autocast already runs matmuls in 16 bits."
TARGET = "settings"
READS = "trainer_config, torch"
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    mixed_by_scope = {}
    for setting in ctx.settings:
        mode = precision_mode(setting) if setting.name == "precision" else None
        if mode is not None and mode.kind == "mixed" and mode.dtype in ("fp16", "bf16"):
            mixed_by_scope[setting.scope] = (setting, mode)
    if not mixed_by_scope:
        return
    for setting in ctx.settings:
        if setting.name != "tf32_matmul_precision" or setting.value not in ("high", "medium"):
            continue
        found = mixed_by_scope.get(setting.scope)
        if found is None:
            continue
        precision, mode = found
        dtype = "float16" if mode.dtype == "fp16" else "bfloat16"
        fix = remove_entry(setting, f"Remove {setting.key_path[-1]}", safe=True)
        yield ctx.report(
            setting.span,
            f"tf32_matmul_precision={setting.value!r} has almost no effect with precision={precision.value!r}; "
            "remove it"
            f"\nautocast already runs matmuls in {dtype}; the setting only reaches float32 matmuls outside "
            "autocast",
            fix=fix,
        )
