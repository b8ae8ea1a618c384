"""## What it does
Finds a DeepSpeed config whose `torch_autocast` section is enabled beside an enabled `fp16` or `bf16` block,
where the project's DeepSpeed may be a release that refuses the combination: 0.17.2 to 0.18.2. With a DeepSpeed
pin that allows only 0.18.3 or newer nothing is reported (those releases accept it); with no DeepSpeed version
declared the finding is a warning that names the releases concerned.

## Why is this bad?
DeepSpeed 0.17.2 added the `torch_autocast` section (the engine runs the forward under `torch.autocast` itself;
deepspeedai/DeepSpeed#6993). Its check, `_validate_auto_cast_settings` in `deepspeed/runtime/torch_autocast.py`,
asserted from 0.17.2 to 0.18.2:

    assert not engine.fp16_enabled(), "Cannot enable both torch autocast and fp16"
    assert not engine.bfloat16_enabled(), "Cannot enable both torch autocast and bfloat16"

so `deepspeed.initialize` fails on the booked machine, before the first step. 0.18.3 (deepspeedai/DeepSpeed#7700,
low-precision master parameters, gradients and optimizer states) dropped both assertions and keeps only the one
about ZeRO quantized weights, so the same config starts there.

## Example
```json
{
  "bf16": {"enabled": true},
  "torch_autocast": {"enabled": true, "dtype": "bfloat16"}
}
```

## Use instead
```json
{
  "torch_autocast": {"enabled": true, "dtype": "bfloat16"}
}
```
(the engine's autocast with float32 parameters), or `deepspeed>=0.18.3` in the project's requirements.

## Fix safety
No fix: which of the two to keep, or which DeepSpeed to require, is the user's choice.

## References
- The section and its check appear in 0.17.2 (0.17.1 has no `deepspeed/runtime/torch_autocast.py`), from
  "Enable torch.autocast with ZeRO": https://github.com/deepspeedai/DeepSpeed/pull/6993
- The two assertions, `deepspeed/runtime/torch_autocast.py` lines 32-33 at v0.17.2 through v0.18.2:
  https://github.com/deepspeedai/DeepSpeed/blob/v0.18.2/deepspeed/runtime/torch_autocast.py#L30-L34
- 0.18.3 keeps only the quantized-weights assertion (line 32):
  https://github.com/deepspeedai/DeepSpeed/blob/v0.18.3/deepspeed/runtime/torch_autocast.py#L30-L32
- The change that dropped them ("Low-precision master params/grads/optimizer states"):
  https://github.com/deepspeedai/DeepSpeed/pull/7700
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import hedge
from precisionlint.core.model import Finding, Related, Setting, Severity

CODE = "PL406"
NAME = "torch-autocast-beside-deepspeed-precision"
SEVERITY = Severity.ERROR
SUMMARY = "DeepSpeed torch_autocast enabled beside fp16/bf16: DeepSpeed 0.17.2-0.18.2 refuse to start."
TARGET = "settings"
READS = "deepspeed, pins"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets

_FIRST = (0, 17, 2)  # the first release with the section and its assertions
_FIXED = (0, 18, 3)  # the first release without them


def check(ctx: CheckContext) -> Iterator[Finding]:
    by_scope: dict[str, dict[str, Setting]] = {}
    for setting in ctx.settings:
        if setting.framework == "deepspeed":
            by_scope.setdefault(setting.scope, {})[setting.name] = setting
    for named in by_scope.values():
        autocast = named.get("torch_autocast")
        if autocast is None or autocast.value is not True:
            continue
        peer = next((named[n] for n in ("fp16", "bf16") if n in named and named[n].value is True), None)
        if peer is None:
            continue
        declared = ctx.project.version("deepspeed")
        if declared is not None and (declared.all_at_least(_FIXED) or declared.all_below(_FIRST)):
            continue  # every allowed release accepts it (or has no torch_autocast section to refuse)
        mode = "bfloat16" if peer.name == "bf16" else "fp16"
        if declared is None:
            versions, severity = "DeepSpeed 0.17.2 to 0.18.2 (no DeepSpeed version is declared)", Severity.WARNING
        else:
            versions, severity = f"DeepSpeed 0.17.2 to 0.18.2, which {declared.declared('deepspeed')} allows", None
        yield ctx.report(
            autocast.span,
            f"torch_autocast is enabled beside {peer.key_text} (line {peer.span.line}): {versions} assert "
            f"\"Cannot enable both torch autocast and {mode}\" at start-up; disable one of them or require "
            f"deepspeed>=0.18.3{hedge(autocast, 'DeepSpeed')}",
            severity=severity,
            related=(Related("", peer.span, f"{peer.key_text} enabled here"),),
        )
