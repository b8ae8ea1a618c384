"""## What it does
Finds a `GradScaler` that is always enabled (no `enabled=`, or `enabled=True`) while every autocast region
whose loss it scales runs bfloat16.

A scaler whose `enabled=` is computed (`GradScaler(enabled=(dtype == "float16"))`, nanoGPT's pattern) is the
right way to share one loop between float16 and bfloat16 and is not reported. Two run-time conditions are
compared with the autocast's, though:

- `GradScaler(enabled=cfg.amp)` where the only autocast it serves is bfloat16, always on or switched by that same
  flag: the flag that enables the scaler is the flag that enables bfloat16, so it is enabled exactly when it is
  useless;
- `GradScaler(enabled=(args.dtype in ["float16", "bfloat16"]))` beside `dtype=DTYPES[args.dtype]`: the enabling
  test and the autocast's dtype are chosen by one variable whose every value is known (an option's default and
  choices, the arms that assign it), and one of its values enables the scaler while every autocast it serves runs
  bfloat16;
- a scaler built only in one arm of a test (`GradScaler() if use_bf16 else None`) while the autocast's dtype,
  decided by the same test, is bfloat16 in that arm: the scaler serves bfloat16 only, and the float16 arm, which
  needs one, has none.

## Why is this bad?
Loss scaling exists because float16 gradients underflow below ~6e-8. bfloat16 has the same 8-bit exponent as
float32, so its gradients do not underflow and need no scaling. With bfloat16 autocast and float32
parameters the scaler is not harmful, only overhead: every step multiplies the loss, checks all gradients for
inf/NaN (a device synchronization) and unscales them. Hugging Face Transformers and Accelerate removed it for
bf16, and Lightning refuses a scaler with `bf16-mixed`. (With bfloat16 *parameters*, `unscale_` is not even
implemented for that dtype.)

## Example
```python
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
```

## Use instead
```python
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
loss.backward()
optimizer.step()
```
or `scaler = torch.amp.GradScaler("cuda", enabled=(dtype == torch.float16))`.

## Fix safety
No fix: removing the scaler means rewriting the backward and step calls.

## References
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
- https://github.com/huggingface/transformers/pull/21428
- https://github.com/huggingface/accelerate/pull/1036
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity
from precisionlint.script.flow_names import strip_not

if TYPE_CHECKING:
    from precisionlint.script.model import AutocastRegion, GradScalerInfo, ScriptModel
    from precisionlint.script.scopes import Scope

CODE = "PL202"
NAME = "unnecessary-grad-scaler"
SEVERITY = Severity.WARNING
SUMMARY = "An always-enabled GradScaler serves only bfloat16 autocast: pure overhead."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"GradScaler", b".scale(")
# The model knows a GradScaler only by its construction, `x.scale(loss)` or `x.unscale_(optimizer)`: a name that
# merely says "scaler" (a Trainer's `scaler` property, a comment) gives it no scaler.
MODEL_WORDS: tuple[str, ...] = ("GradScaler", ".scale(", "unscale_")


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    for scaler in model.scalers.values():
        if not scaler.constructed or scaler.span is None or scaler.enabled is False:
            continue
        served: set[AutocastRegion] = set()
        for event in scaler.events:
            if event.kind in ("scaled_backward", "backward"):  # backward: `loss = scaler.scale(loss)` first
                served |= event.reached
        regions = sorted(served, key=lambda r: r.span)
        active = [r for r in regions if r.enabled is not False]
        if not active:
            continue
        lines = ", ".join(str(r.line) for r in active)
        if scaler.enabled is True and not scaler.conditional:
            if any(r.dtype != "bfloat16" for r in active):
                continue
            yield ctx.report(
                scaler.span,
                f"`{scaler.text}` is always enabled but only scales losses from bfloat16 autocast (line {lines}), "
                "which has float32's exponent range and needs no loss scaling: with float32 parameters it is pure "
                "overhead (an inf/NaN check and unscale every step), not an error; drop it or pass "
                "`enabled=(dtype == torch.float16)`",
            )
            continue
        flag = _same_flag(model, scaler, active)
        if flag is not None:
            yield ctx.report(
                scaler.span,
                f"`{scaler.text}` is enabled by `{flag}`, and the only autocast it serves is bfloat16 (line {lines}), "
                f"always on or switched by that same flag: whenever `{flag}` turns the scaler on it scales bfloat16 "
                "losses, which need no loss scaling (pure overhead: an inf/NaN check and unscale every step); "
                "pass `enabled=(dtype == torch.float16)` instead",
            )
            continue
        correlated = _correlated(ctx, scaler, active)
        if correlated is not None:
            name, value = correlated
            yield ctx.report(
                scaler.span,
                f"`{scaler.text}` is enabled when `{name}` is {value!r}, and then the autocast it serves runs "
                f"bfloat16 (line {lines}), which needs no loss scaling (pure overhead: an inf/NaN check and unscale "
                "every step); enable it for float16 only: `enabled=(dtype == torch.float16)`",
            )
            continue
        arm = _bf16_arm(model, scaler, active)
        if arm is not None:
            test, other = arm
            unscaled = "; the float16 arm, which needs a scaler, gets none" if other == "float16" else ""
            yield ctx.report(
                scaler.span,
                f"`{scaler.text}` is built only when {test}, and under that same condition the autocast it serves "
                f"runs bfloat16 (line {lines}), which needs no loss scaling{unscaled}: build the scaler when the dtype "
                "is float16 (`enabled=(dtype == torch.float16)`)",
            )


_FP16_WORDS = ("16", "half", "dtype", "precision", "fp", "float", "scal")


def _same_flag(model: ScriptModel, scaler: GradScalerInfo, active: list[AutocastRegion]) -> str | None:
    """`enabled=<flag>` (a plain name or attribute such as `cfg.amp`, not a dtype test) while every region it
    serves is bfloat16 and either always enabled or enabled by the same flag: the flag's text, else None."""
    from precisionlint.script.names import dotted

    expr = scaler.enabled_expr
    if scaler.enabled is not None or scaler.conditional or expr is None or dotted(expr) is None:
        return None
    text = dotted(expr) or ""
    if any(word in text.lower() for word in _FP16_WORDS):
        return None  # `enabled=args.fp16`, `enabled=use_scaler`: meant for float16; the mismatch is elsewhere
    for region in active:
        if region.dtype != "bfloat16" or region.conditional:
            return None
        if region.enabled is not True and not (
            region.enabled_expr is not None and ast.dump(region.enabled_expr) == ast.dump(expr)
        ):
            return None
    return text


def _bf16_arm(model: ScriptModel, scaler: GradScalerInfo, active: list[AutocastRegion]) -> tuple[str, str] | None:
    """A scaler built only where a test has one truth value, while every region it serves has bfloat16 under
    that same truth value: (the test as written, the dtype of the other arm or "")."""
    if scaler.condition is None or scaler.enabled is not True:
        return None
    test, truth = scaler.condition
    key, negated = strip_not(test)
    if not _simple(key):
        return None
    wanted = truth != negated
    others: set[str] = set()
    for region in active:
        if region.dtype_expr is None:
            return None
        here = _dtype_given(model, region.dtype_expr, region.scope, ast.dump(key), wanted, 0)
        if here != "bfloat16":
            return None
        others.add(_dtype_given(model, region.dtype_expr, region.scope, ast.dump(key), not wanted, 0) or "")
    written = model.positions.segment(test)
    return f"`{written}` is {'true' if truth else 'false'}", (others.pop() if len(others) == 1 else "")


def _dtype_given(model: ScriptModel, expr: ast.expr, scope: Scope, key: str, value: bool, depth: int) -> str | None:
    """The dtype of `expr` when the test whose dump is `key` has truth `value`: `a if test else b` picks an arm;
    a name assigned once is followed."""
    if depth > 6:
        return None
    if isinstance(expr, ast.IfExp):
        test, negated = strip_not(expr.test)
        if ast.dump(test) == key:
            arm = expr.body if value != negated else expr.orelse
            return _dtype_given(model, arm, scope, key, value, depth + 1)
        return None
    if isinstance(expr, ast.Name):
        values = model.resolver.bound_values(expr, scope)
        if len(values) == 1 and values[0][0] is not None:
            return _dtype_given(model, values[0][0], values[0][1], key, value, depth + 1)
    return model.resolver.dtype(expr, scope)


def _simple(test: ast.expr) -> bool:
    """A test that reads the same value wherever it is written: names, attributes, constants, comparisons."""
    return all(
        isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Load))
        or isinstance(n, (ast.cmpop, ast.boolop, ast.unaryop))
        for n in ast.walk(test)
    )


def _correlated(ctx: CheckContext, scaler: GradScalerInfo, active: list[AutocastRegion]) -> tuple[str, object] | None:
    """`enabled=` and the autocast's `dtype=` chosen by one variable (`args.dtype`, an option with choices): a value
    of it under which the scaler is enabled and every region it serves runs bfloat16 (`enabled=(args.dtype in
    ["float16", "bfloat16"])` beside `dtype=DTYPES[args.dtype]`). Every value the variable can take must be
    known (an option's default and choices, the arms that assign it)."""
    from precisionlint.script.values import Dtype
    from precisionlint.values.assume import evaluate, known_values
    from precisionlint.values.settings import document_finder

    expr = scaler.enabled_expr
    if expr is None or scaler.enabled is not None or any(r.dtype_expr is None for r in active):
        return None
    finder = document_finder(ctx.document)
    if finder is None:
        return None
    scope = finder.scope_at(expr)
    for name, values in known_values(finder, expr, scope):
        for value in values:
            assumed = {name: value}
            if evaluate(finder, expr, scope, assumed) is not True:
                continue
            dtypes = [evaluate(finder, r.dtype_expr, r.scope, assumed) for r in active]  # type: ignore[arg-type]
            if all(isinstance(d, Dtype) and d.name == "bfloat16" for d in dtypes):
                return name, value
    return None
