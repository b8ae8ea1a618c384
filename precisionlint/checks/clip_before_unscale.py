"""## What it does
Finds gradient clipping (`torch.nn.utils.clip_grad_norm_`, `clip_grad_value_`, an FSDP module's
`clip_grad_norm_`) that runs after `scaler.scale(loss).backward()` and before `scaler.step(...)` with no
`scaler.unscale_(optimizer)` in between, on some path through the function. Clipping in a branch where the
scaler is known to be off is not reported. `accelerator.clip_grad_norm_` and Lightning's clipping in automatic
optimization (`Trainer(gradient_clip_val=...)`) unscale first and are never reported.

Also a plain torch clip after a framework's own scaled backward, in the same function: `accelerator.backward(loss)`
of an `Accelerator(mixed_precision="fp16")`, or `fabric.backward(loss)` of a `Fabric(precision="16-mixed")`, with
the precision written at that object's construction (an error) or reaching it as an option's default or one arm
of a conditional (a warning). A file that calls `unscale_gradients` or names DeepSpeed (which scales and clips by
itself) is not reported.

Also Lightning's manual optimization: `self.manual_backward(loss)` in a LightningModule, then a plain torch clip
or Lightning's own `self.clip_gradients(opt, ...)` in the same method, where a `Trainer(precision="16-mixed")`
(or `16`) of the same file trains it. Lightning's AMP plugin scales the loss in `manual_backward` and unscales the
gradients only inside `opt.step()`, after the closure and right before the `on_before_optimizer_step` hook; its
`clip_gradients` does not unscale (Lightning-AI/pytorch-lightning#18089, open). Clip in that hook instead. A
file that calls `unscale_` anywhere is not reported.

## Why is this bad?
After `scaler.scale(loss).backward()` every gradient is multiplied by the loss scale (65536 at the start). The
clip threshold is then compared with scaled gradients, and `scaler.step` divides them by the scale afterwards:
gradients end up clipped to `max_norm / scale`, orders of magnitude smaller than intended, whenever the clip
triggers, which is almost always. Updates become tiny and training crawls, without any error.

## Example
```python
scaler.scale(loss).backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
scaler.step(optimizer)
scaler.update()
```

## Use instead
```python
scaler.scale(loss).backward()
scaler.unscale_(optimizer)
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
scaler.step(optimizer)
scaler.update()
```

## Fix safety
The fix inserts `scaler.unscale_(optimizer)` on its own line before the clip, with the scaler and optimizer
names of that function. It is unsafe (it changes the clipped values, which is the point, so review it), and it
is offered only where it cannot break the program: the same function steps the scaler after the clip with one
optimizer, in the same loops as the clip (`unscale_` may run only once per optimizer per step; a second call
raises, as it would inside a gradient-accumulation loop); the scaler is unscaled nowhere else in the file; both
names are bound at the clip; and the fixed file parses. Otherwise the finding comes without a fix.

Under Accelerate with fp16, `accelerator.backward(loss)` runs `self.scaler.scale(loss).backward()`; only
`accelerator.clip_grad_norm_`/`clip_grad_value_` (or `accelerator.unscale_gradients()`) unscale before clipping,
and the optimizer's step unscales after the clip. Fabric's `backward` scales the same way, and
`fabric.clip_gradients` unscales first.

## References
- https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping
- https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.unscale_
- Accelerate 1.15, `src/accelerate/accelerator.py`: the GradScaler is made only for `mixed_precision == "fp16"`
  outside DeepSpeed and Megatron-LM (`__init__`, around line 565); `backward` (line 2818) calls
  `self.scaler.scale(loss).backward(**kwargs)` (line 2846); `unscale_gradients` (line 2911) calls
  `self.scaler.unscale_(opt)`; `clip_grad_norm_` (line 2946) calls `self.unscale_gradients()` before
  `torch.nn.utils.clip_grad_norm_` (line 3006), as `clip_grad_value_` does (line 3033)
- Lightning 2.6, `src/lightning/pytorch/plugins/precision/amp.py`: `pre_backward` scales the loss
  (`self.scaler.scale(tensor)`); `optimizer_step` runs the closure, then `self.scaler.unscale_(optimizer)`, then
  `_after_closure` (the `on_before_optimizer_step` hooks), then `self.scaler.step`; `clip_gradients` only checks
  for fused optimizers before clipping. `plugins/precision/precision.py`: `_clip_gradients` returns at once in
  manual optimization. `core/hooks.py`: `on_after_backward` "If using native AMP, the gradients will not be
  unscaled at this point. Use the `on_before_optimizer_step` if you need the unscaled gradients."
  https://github.com/Lightning-AI/pytorch-lightning/issues/18089
- Lightning 2.6, `src/lightning/fabric/plugins/precision/amp.py`: `backward` scales the tensor with the scaler
  (lines 75-78); `src/lightning/fabric/strategies/strategy.py`: `clip_gradients_norm` and `clip_gradients_value`
  call `self.precision.unscale_gradients(optimizer)` first (lines 384, 392)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.core.model import SAME_FILE, Finding, Fix, Related, Severity

if TYPE_CHECKING:
    from precisionlint.script.model import Event, GradScalerInfo, ScriptModel

CODE = "PL204"
NAME = "clip-before-unscale"
SEVERITY = Severity.ERROR
SUMMARY = "Gradients are clipped while still multiplied by the GradScaler's loss scale."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"GradScaler", b".scale(", b"precision")  # precision: a framework scales
# The model knows a GradScaler only by its construction, `x.scale(loss)` or `x.unscale_(optimizer)`: a name that
# merely says "scaler" (a Trainer's `scaler` property, a comment) gives it no scaler.
MODEL_WORDS: tuple[str, ...] = ("GradScaler", ".scale(", "unscale_")
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    yield from _framework_scaled(ctx, model)
    yield from _manual_backward(ctx, model)
    for clip in model.events_of("clip"):
        pending = sorted(k for k in clip.pending_unscale if model.scalers[k].enabled is not False)
        if not pending or _other_scaler_unscaled(model, clip):
            continue
        scaler = model.scalers[pending[0]]
        here = [e for e in scaler.events if e.scope is clip.scope]
        backwards = [e for e in scaler.scaled_backwards() if e.scope is clip.scope and e.order < clip.order]
        backward = backwards[-1] if backwards else None
        text = backward.scaler_text if backward and backward.scaler_text else scaler.text
        optimizer = _optimizer(here, clip) or _optimizer(scaler.events, clip)
        after = f" on line {backward.span.line}" if backward else ""
        other = scaler.scaled_elsewhere(clip) if backward is None else None
        if other is not None:
            after = f" in `{other.scope.qualname}`, line {other.span.line}"
        yield ctx.report(
            clip.span,
            f"gradients are clipped while still multiplied by the loss scale of `{text}`; call "
            f"`{text}.unscale_({optimizer or 'optimizer'})` right before clipping"
            f"\nscaled backward{after}, and no `unscale_` before this clip on some path: once `step` unscales the "
            "gradients they have been clipped to max_norm / scale, far too small",
            fix=_fix(model, scaler, clip, text),
            severity=None if scaler.enabled is True else Severity.WARNING,
        )


def _fix(model: ScriptModel, scaler: GradScalerInfo, clip: Event, text: str) -> Fix | None:
    """`scaler.unscale_(optimizer)` on its own line before the clip, offered only when it is certain to run
    exactly once per optimizer step and to name objects that exist there:

    - the same function steps this scaler after the clip, always with one optimizer, in the same loops as the
      clip (a clip inside a gradient-accumulation loop would unscale several times per step, which raises);
    - the scaler is unscaled nowhere in the file (a second `unscale_` in the same step raises);
    - the scaler and optimizer names are bound at the clip (a parameter, a global, a local assigned above it,
      an attribute set on `self`);
    - the fixed file parses."""
    from precisionlint.script.fixes import bound_at, insert_line_before, parses_after

    if any(e.kind == "unscale" for e in scaler.events):
        return None
    steps = [e for e in scaler.events if e.kind == "scaler_step" and e.scope is clip.scope and e.order > clip.order]
    optimizers = {e.optimizer for e in steps}
    if not steps or len(optimizers) != 1 or None in optimizers:
        return None
    step = steps[0]
    optimizer = step.optimizer
    assert optimizer is not None
    if step.loops != clip.loops:
        return None
    if not (bound_at(model, text, clip.scope, clip.stmt) and bound_at(model, optimizer, clip.scope, clip.stmt)):
        return None
    edit = insert_line_before(model.positions, clip.stmt, f"{text}.unscale_({optimizer})")
    if edit is None or not parses_after(model, [edit]):
        return None
    return Fix(f"Insert `{text}.unscale_({optimizer})` before clipping", "unsafe", (edit,))


def _other_scaler_unscaled(model: ScriptModel, clip: Event) -> bool:
    """Several scalers (one per model: GAN generator and discriminator, actor and critic) and one of them
    unscaled right before this clip: the clipped parameters most likely belong to that one, and which
    parameters each optimizer owns is not visible statically. Silence beats a false alarm here."""
    unscaled_before = [
        key
        for key, scaler in model.scalers.items()
        if any(e.kind == "unscale" and e.scope is clip.scope and e.order < clip.order for e in scaler.events)
    ]
    return bool(unscaled_before) and any(key not in clip.pending_unscale for key in unscaled_before)


def _optimizer(events: list[Event], clip: Event) -> str | None:
    """The optimizer this scaler steps: the next `scaler.step(x)` after the clip, else any step or unscale_."""
    steps = [e for e in events if e.kind == "scaler_step" and e.optimizer]
    following = [e for e in steps if e.order > clip.order and e.scope is clip.scope]
    for candidate in following or steps or [e for e in events if e.kind == "unscale" and e.optimizer]:
        return candidate.optimizer
    return None


# Frameworks whose backward scales the loss under float16 mixed precision, and what unscales it before a clip:
# (package prefix of the object's constructor, setting name, float16 values, the framework's own clip).
_FRAMEWORKS = (
    ("accelerate.", "accelerate", "mixed_precision", ("fp16",), "accelerator.clip_grad_norm_"),
    ("lightning.", "lightning", "precision", (16, "16", "16-mixed"), "fabric.clip_gradients"),
    ("lightning_fabric.", "lightning", "precision", (16, "16", "16-mixed"), "fabric.clip_gradients"),
)


def _framework_scaled(ctx: CheckContext, model: ScriptModel) -> Iterator[Finding]:
    """`accelerator.backward(loss)` under `Accelerator(mixed_precision="fp16")` (or `fabric.backward(loss)` under
    `Fabric(precision="16-mixed")`), then a plain `torch.nn.utils.clip_grad_norm_` in the same function: the
    framework scaled the loss, and only its own clip (or `unscale_gradients`) unscales first."""
    backwards = model.events_of("framework_backward")
    if not backwards:
        return
    text = ctx.document.text
    if "unscale_gradients" in text or "deepspeed" in text.lower():
        return  # unscaled by hand, or DeepSpeed scales and clips by itself
    for clip in model.events_of("clip"):
        earlier = [b for b in backwards if b.scope is clip.scope and b.order < clip.order
                   and isinstance(b.node.func, ast.Attribute)]
        if not earlier:
            continue
        backward = earlier[-1]
        receiver = backward.node.func.value  # type: ignore[attr-defined]
        for prefix, framework, name, fp16, own_clip in _FRAMEWORKS:
            built = _constructors(model, receiver, backward.scope, prefix, framework)
            if not built:
                continue
            # the setting of the call that built this object (its scope is the call's position)
            setting = next((s for s in ctx.judged_settings if s.framework == framework and s.name == name
                            and s.scope in built and s.value in fp16 and not isinstance(s.value, bool)), None)
            if setting is None:
                break
            shown = model.positions.segment(receiver)
            where = (f" ({name}={setting.value!r} at line {setting.span.line})" if setting.origin is None
                     else f" ({name}={setting.value!r} on some paths: {setting.origin.note()})")
            own = own_clip.replace("accelerator", shown).replace("fabric", shown)
            yield ctx.report(
                clip.span,
                f"gradients are clipped while still multiplied by the loss scale: `{shown}.backward` scaled the "
                f"loss for float16{where}, and a plain torch clip does not unscale them; once the optimizer steps "
                f"they are clipped to max_norm / scale, far too small. Use `{own}(...)`, which unscales first",
                severity=Severity.ERROR if setting.origin is None else Severity.WARNING,
                related=(Related(SAME_FILE, backward.span, "the framework's scaled backward"),),
            )
            break


_LIGHTNING_FP16 = (16, "16", "16-mixed")


def _manual_backward(ctx: CheckContext, model: ScriptModel) -> Iterator[Finding]:
    """`self.manual_backward(loss)` in a LightningModule trained by a `Trainer(precision="16-mixed")` of the same
    file, then a clip in the same method before the optimizer steps: a plain torch clip or Lightning's own
    `self.clip_gradients(...)`. Lightning's AMP plugin scales the loss in `manual_backward` and unscales only inside
    the optimizer's step, after this clip (lightning/pytorch/plugins/precision/amp.py)."""
    backwards = [e for e in model.events_of("framework_backward")
                 if isinstance(e.node.func, ast.Attribute) and e.node.func.attr == "manual_backward"
                 and isinstance(e.node.func.value, ast.Name) and e.node.func.value.id == "self"]
    if not backwards:
        return
    text = ctx.document.text
    if "unscale_" in text or "deepspeed" in text.lower():
        return  # unscaled by hand, or DeepSpeed scales and clips by itself
    trainers = [s for s in ctx.judged_settings if s.framework == "lightning" and s.name == "precision"
                and s.key_path[:1] == ("Trainer",) and not isinstance(s.value, bool)]
    setting = next((s for s in trainers if s.value in _LIGHTNING_FP16), None)
    if setting is None or any(s.value not in _LIGHTNING_FP16 and s.origin is None for s in trainers):
        return  # no float16 Trainer here, or another Trainer of this file that may be the one training it
    where = (f"precision={setting.value!r} at line {setting.span.line}" if setting.origin is None
             else f"precision={setting.value!r} on some paths: {setting.origin.note()}")
    for backward in backwards:
        clips = [(e.span, e.node) for e in model.events_of("clip")
                 if e.scope is backward.scope and e.order > backward.order]
        clips += [(model.positions.span(call), call) for call in _own_clips(backward)]
        for span, _ in sorted(clips, key=lambda c: c[0])[:1]:
            yield ctx.report(
                span,
                f"gradients are clipped while still multiplied by the loss scale: `self.manual_backward` scaled "
                f"the loss for float16 (the Trainer's {where}), and Lightning unscales the gradients only inside "
                "the optimizer's step, after this clip; they end up clipped to max_norm / scale, far too small. "
                "Clip in the LightningModule's `on_before_optimizer_step(self, optimizer)` hook, which Lightning "
                "calls after unscaling, or train with precision='bf16-mixed'",
                severity=Severity.ERROR if setting.origin is None else Severity.WARNING,
                related=(Related(SAME_FILE, backward.span, "the framework's scaled backward"),),
            )


def _own_clips(backward: Event) -> list[ast.Call]:
    """`self.clip_gradients(...)` written after the backward in the same method (Lightning's clip, which does not
    unscale in manual optimization under a Trainer)."""
    found = []
    start = (backward.node.lineno, backward.node.col_offset)
    for node in ast.walk(backward.scope.node):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "clip_gradients"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                and (node.lineno, node.col_offset) > start):
            found.append(node)
    return found


def _constructors(model: ScriptModel, receiver: ast.expr, scope: object, prefix: str, framework: str) -> set[str]:
    """The setting scopes ("accelerate@6:15") of the framework calls that `receiver` may be bound to."""
    found = set()
    for value, owner in model.resolver.bound_values(receiver, scope):  # type: ignore[arg-type]
        if isinstance(value, ast.Call) and (model.resolver.qualname(value.func, owner) or "").startswith(prefix):
            found.add(f"{framework}@{value.lineno}:{value.col_offset + 1}")
    return found
