"""## What it does
Finds TF32 settings in a script that cannot do what the code around them means:

- TF32 turned on under a compute-capability test that lets 7.x through (`if capability >= 7:`,
  `if torch.cuda.get_device_capability()[0] >= 7:`). TF32 tensor cores exist from compute capability 8.0
  (Ampere); on a V100 (7.0) or T4 (7.5) the setting does nothing, so the test documents a speed-up that
  does not happen there (an informational finding).
- A function whose name says it enables TF32 (`enable_tf32`, `setup_tf32`, `use_tf32`) that writes
  `fp32_precision = "ieee"`, `allow_tf32 = False` or `set_float32_matmul_precision("highest")`, which turn
  TF32 off.

## Why is this bad?
`fp32_precision = "ieee"` is the new API's spelling of *full float32*: it disables TF32 for that backend, the
opposite of what the function promises, so float32 matmuls and convolutions run several times slower on
Ampere and newer GPUs than intended, without any error. A capability gate at 7 is harmless at run time but
wrong about the hardware: on 7.x the code believes TF32 is on while every float32 matmul stays full IEEE.

## Example
```python
def enable_tf32():
    torch.backends.cuda.matmul.fp32_precision = "ieee"
    torch.backends.cudnn.conv.fp32_precision = "ieee"

if torch.cuda.get_device_capability()[0] >= 7:
    torch.backends.cuda.matmul.allow_tf32 = True
```

## Use instead
```python
def enable_tf32():
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    torch.backends.cudnn.conv.fp32_precision = "tf32"

if torch.cuda.get_device_capability()[0] >= 8:
    torch.backends.cuda.matmul.allow_tf32 = True
```

## Fix safety
No fix: whether the function or its name is wrong is the author's call.

## References
- https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
- https://developer.nvidia.com/cuda-gpus
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL214"
NAME = "ineffective-tf32-setting"
SEVERITY = Severity.WARNING
SUMMARY = "A TF32 setting that cannot do what its code means: gated at compute capability 7, or off in an enable."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"tf32", b"fp32_precision", b"precision")
MODEL_WORDS: tuple[str, ...] = ("tf32", "fp32_precision", "matmul_precision")  # the TF32 switches the model records


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.script.tf32 import capability_gate_below_ampere, means_to_enable

    model = ctx.script
    for write in model.tf32_writes:
        if write.enables is True:
            gate = next((test for test, body in write.gates if body and capability_gate_below_ampere(test)), None)
            if gate is not None:
                yield ctx.report(
                    write.span,
                    f"TF32 is turned on under `{model.positions.segment(gate)}`, which lets compute capability 7.x "
                    "through: TF32 needs 8.0 (Ampere) or newer, so on a V100 or T4 this does nothing and float32 "
                    "matmuls stay full IEEE; test for 8 (`get_device_capability()[0] >= 8`)",
                    severity=Severity.INFO,
                )
        elif write.enables is False:
            function = write.scope
            # under an `if` the function may be switching TF32 off on purpose (`set_tf32(enabled)`)
            if function.kind != "function" or write.gates or not means_to_enable(function.name):
                continue
            yield ctx.report(
                write.span,
                f"`{function.qualname}` is meant to enable TF32 but `{write.text}` turns it off (full IEEE float32 "
                "for this backend): float32 matmuls and convolutions run several times slower on Ampere and newer "
                f"GPUs than the name promises; write {_enabling(write.api)}",
            )


def _enabling(api: str) -> str:
    if api == "torch.set_float32_matmul_precision":
        return '`torch.set_float32_matmul_precision("high")`'
    if api.endswith(".allow_tf32"):
        return f"`{api} = True`"
    return f'`{api} = "tf32"`'
