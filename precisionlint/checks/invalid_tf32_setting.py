"""## What it does
Checks the float32 matmul precision: `tf32_matmul_precision` in a `[trainer_config]` table and the argument of
`torch.set_float32_matmul_precision(...)` must be `"highest"`, `"high"` or `"medium"` (configs may also say
`null` / leave it out, meaning "do not call it").

Frameworks: the `[trainer_config]` factory table (certain: the table itself is the evidence) and literal calls of
`torch.set_float32_matmul_precision` resolved through the file's imports.

## Why is this bad?
PyTorch compares the string exactly. Any other value (`"tf32"`, `"High"`, `"low"`, `True`) is not an error:
PyTorch only prints a warning and keeps the previous precision, so the run silently uses full IEEE float32
matmuls (or whatever was set before) while the config says otherwise.

## Example
```toml
[trainer_config]
precision = "32-true"
tf32_matmul_precision = "tf32"
```

## Use instead
```toml
[trainer_config]
precision = "32-true"
tf32_matmul_precision = "high"
```

Note that on CUDA `"medium"` behaves exactly like `"high"` (TF32): the CUDA backend has no bfloat16 path
for float32 matmuls; `"medium"` differs only on the CPU (oneDNN).

## Fix safety
The fix replaces a wrongly cased value (`"High"`) with its lower-case form, which is what was clearly meant.
It is unsafe, because it turns on TF32 that was in fact off.

## References
- `torch.set_float32_matmul_precision`: https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html
- PyTorch source, `aten/src/ATen/Context.cpp` (`setFloat32MatmulPrecision`)
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity
from precisionlint.frameworks import TF32_MATMUL_PRECISION
from precisionlint.sources.setting_edits import replace_value

CODE = "PL103"
NAME = "invalid-tf32-setting"
SEVERITY = Severity.ERROR
SUMMARY = "A float32 matmul precision other than highest, high or medium (PyTorch ignores it)."
TARGET = "settings"
READS = "trainer_config, torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"precision",)
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    for setting in ctx.settings:
        if setting.name != "tf32_matmul_precision" or not setting.resolved:
            continue
        value = setting.value
        if value in TF32_MATMUL_PRECISION:
            continue
        if value is None and setting.framework != "torch":
            continue  # null in a config means "leave PyTorch's default"
        fix = None
        hint = "use 'highest' (IEEE float32), 'high' (TF32) or 'medium' (TF32 on CUDA)"
        if isinstance(value, str) and value.strip().lower() in TF32_MATMUL_PRECISION:
            wanted = value.strip().lower()
            hint = f"PyTorch compares exactly: write '{wanted}'"
            fix = replace_value(ctx.document, setting, wanted, f"Replace with '{wanted}'", safe=False)
        elif value in ("tf32", "TF32", True, "true", "on"):
            hint = "for TF32 write 'high'"
        yield ctx.report(
            setting.span,
            f"float32 matmul precision {value!r} is not one of 'highest', 'high', 'medium': PyTorch only warns "
            f"and keeps the previous setting; {hint}",
            fix=fix,
        )
