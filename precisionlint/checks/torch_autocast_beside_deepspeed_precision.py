"""## What it does
Finds a DeepSpeed config whose `torch_autocast` section is enabled beside an enabled `fp16` or `bf16` block,
where the project's DeepSpeed may be a release that refuses the combination: 0.17.2 to 0.18.2. With a DeepSpeed
pin that allows only 0.18.3 or newer nothing is reported (those releases accept it); with no DeepSpeed version
declared the finding is a warning that names the releases concerned. The config is read where it is written: a
JSON or YAML file, or a dict literal in a Python file that names DeepSpeed (`ds_config = {"bf16": {"enabled":
True}, "torch_autocast": {"enabled": True, ...}}`, the form that scripts passing `config=` to
`deepspeed.initialize` write).

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
from precisionlint.checks._attribution import hedge, is_test_code
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Related, Setting, Severity

if TYPE_CHECKING:
    import ast

CODE = "PL406"
NAME = "torch-autocast-beside-deepspeed-precision"
SEVERITY = Severity.ERROR
SUMMARY = "DeepSpeed torch_autocast enabled beside fp16/bf16: DeepSpeed 0.17.2-0.18.2 refuse to start."
TARGET = "settings"
READS = "deepspeed, pins"
TREE_WORDS: tuple[str, ...] = ("autocast",)  # a DeepSpeed dict literal in Python: its "torch_autocast" key
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets

_FIRST = (0, 17, 2)  # the first release with the section and its assertions
_FIXED = (0, 18, 3)  # the first release without them


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.document.format == "python":
        yield from _python_dicts(ctx)
        return
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
        refused = _refused(ctx)
        if refused is None:
            continue  # every allowed release accepts it (or has no torch_autocast section to refuse)
        versions, severity = refused
        mode = "bfloat16" if peer.name == "bf16" else "fp16"
        yield ctx.report(
            autocast.span,
            f"torch_autocast is enabled beside {peer.key_text} (line {peer.span.line}): {versions} assert "
            f"\"Cannot enable both torch autocast and {mode}\" at start-up; disable one of them or require "
            f"deepspeed>=0.18.3{hedge(autocast, 'DeepSpeed')}",
            severity=severity,
            related=(Related("", peer.span, f"{peer.key_text} enabled here"),),
        )


def _refused(ctx: CheckContext) -> tuple[str, Severity | None] | None:
    """Which releases refuse the combination, as the message says it, and the severity (None: the rule's);
    None where every release the project allows accepts it."""
    declared = ctx.project.version("deepspeed")
    if declared is not None and (declared.all_at_least(_FIXED) or declared.all_below(_FIRST)):
        return None
    if declared is None:
        return "DeepSpeed 0.17.2 to 0.18.2 (no DeepSpeed version is declared)", Severity.WARNING
    return f"DeepSpeed 0.17.2 to 0.18.2, which {declared.declared('deepspeed')} allows", None


def _python_dicts(ctx: CheckContext) -> Iterator[Finding]:
    """A DeepSpeed config written as a dict literal in a Python file that names DeepSpeed."""
    import ast

    from precisionlint.sources.positions import node_span
    from precisionlint.sources.python_index import lines_holding, walk_on_lines

    text = ctx.document.text
    if "deepspeed" not in text or "torch_autocast" not in text or not isinstance(ctx.document.tree, ast.Module):
        return
    # only the statements on lines where a `torch_autocast` key is written can hold such a dict
    for node in walk_on_lines(ctx.document.tree, lines_holding(text, ("torch_autocast",))):
        if not isinstance(node, ast.Dict):
            continue
        blocks = {key.value: value for key, value in zip(node.keys, node.values, strict=True)
                  if isinstance(key, ast.Constant) and isinstance(key.value, str)}
        autocast = _enabled(blocks.get("torch_autocast"))
        if autocast is None:
            continue
        found = next(((name, flag) for name in ("fp16", "bf16", "bfloat16")
                      if (flag := _enabled(blocks.get(name))) is not None), None)
        if found is None:
            continue
        refused = _refused(ctx)
        if refused is None:
            return
        versions, severity = refused
        name, flag = found
        mode = "fp16" if name == "fp16" else "bfloat16"
        peer = node_span(ctx.document, flag)
        yield ctx.report(
            node_span(ctx.document, autocast),
            f"torch_autocast is enabled beside {name}.enabled (line {peer.line}): {versions} assert \"Cannot "
            f"enable both torch autocast and {mode}\" at start-up; disable one of them or require deepspeed>=0.18.3",
            severity=Severity.INFO if is_test_code(ctx.document.path) else severity,
            related=(Related("", peer, f"{name}.enabled here"),),
        )


def _enabled(block: ast.expr | None) -> ast.expr | None:
    """The `True` of a `{"enabled": True, ...}` block, or None."""
    import ast

    if not isinstance(block, ast.Dict):
        return None
    for key, value in zip(block.keys, block.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == "enabled" and isinstance(value, ast.Constant) \
                and value.value is True:
            return value
    return None
