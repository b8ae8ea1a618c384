"""## What it does
Finds a loss computed under float16 autocast that is backpropagated with a plain `.backward()` while no
`GradScaler` exists in the file. float16 is autocast's dtype when it is written (`dtype=torch.float16`) and
when `dtype` is omitted on CUDA (`torch.autocast("cuda")`, `torch.cuda.amp.autocast()`); with an unknown
device and no dtype, the finding is a warning ("float16 when the device is cuda"). When the dtype is chosen at
run time among alternatives that include float16 (a table such as
`{"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[args.dtype]`, or
`torch.bfloat16 if flag else torch.float16`), the finding is a warning too: float16 is reachable, and where
the choice is written as `a if test else b` in the call the message names the test under which float16 runs.
The suggested GradScaler takes the autocast's own device: where that is computed (`device_type=device.type`,
and float16 may then run on MPS, which GradScaler supports too) the suggestion names the same expression.

FSDP computing in float16 is the same mistake without autocast: `fully_shard(model, mp_policy=
MixedPrecisionPolicy(param_dtype=torch.float16))` (FSDP2) or `FullyShardedDataParallel(model, mixed_precision=
MixedPrecision(param_dtype=torch.float16))` (FSDP1) runs forward and backward in float16, and a file that does it
and backpropagates with a plain `.backward()` with no GradScaler anywhere is reported at the `param_dtype`. The
suggested scaler is `torch.amp.GradScaler` for FSDP2 and `ShardedGradScaler` for FSDP1 (see
plain-grad-scaler-with-fsdp for why they differ).

A file with a GradScaler is checked path by path: where the scaler is None or disabled on one path
(`scaler = GradScaler() if args.fp16 else None`, then `if scaler is not None: ... else: loss.backward()`), a plain
backward on that path is reported when float16 autocast still runs there (a warning). An autocast whose
`enabled=` or `dtype=` follows the same test (`enabled=args.fp16`) is off on that path, and fine.
Autocast used only for inference (no backward on its outputs, or entered only under `torch.no_grad()` or
`torch.inference_mode()`, whose outputs reach the loss as constants with no gradient flowing back through them:
a frozen encoder mid-loop) is fine, and files that hand the backward pass
to a framework (Lightning, Accelerate, Hugging Face Trainer, DeepSpeed) are not checked: those scale the loss
themselves.

## Why is this bad?
float16 has a narrow exponent range: gradient values below about 6e-8 (2**-24) flush to zero. Many
gradients of a real network are that small, so without loss scaling they vanish and training stalls or
diverges silently. `GradScaler` multiplies the loss by a large factor before backward, unscales the gradients
before the optimizer step, and skips steps whose gradients overflowed. bfloat16 has float32's exponent range
and needs none of this.

In test code (`tests/`, `test_*.py`, `conftest.py`) the finding is informational: a test runs a step to check
the mechanics, not to train a model.

## Example
```python
with torch.autocast("cuda"):
    loss = criterion(model(x), y)
loss.backward()
optimizer.step()
```

## Use instead
```python
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = criterion(model(x), y)
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
```
or `dtype=torch.bfloat16` on GPUs that support it (compute capability 8.0 or newer), without a scaler.

## Fix safety
No fix: adding a scaler touches the backward, the optimizer step and any gradient clipping.

## References
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
- https://pytorch.org/docs/stable/notes/amp_examples.html
- float16's smallest subnormal, 2**-24 (about 6e-8; `torch.finfo(torch.float16).smallest_normal` is 2**-14):
  https://docs.pytorch.org/docs/stable/type_info.html
- FSDP2 computes in `param_dtype` ("the dtype for forward/backward computation"), `MixedPrecisionPolicy`,
  `torch/distributed/fsdp/_fully_shard/_fsdp_api.py` lines 27-32 in PyTorch 2.13.0:
  https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/fsdp/_fully_shard/_fsdp_api.py#L27-L32
- A plain GradScaler serves FSDP2 (DTensor reduces the found-inf flag, `torch/distributed/tensor/_dispatch.py`
  lines 117-158 in 2.13.0; Accelerate builds `torch.amp.GradScaler` for FSDP2, `src/accelerate/utils/fsdp_utils.py`
  lines 861-869 at v1.14.0): https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/utils/fsdp_utils.py#L861-L869
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Severity
from precisionlint.script.names import dotted

if TYPE_CHECKING:
    from precisionlint.script.model import AutocastRegion

CODE = "PL201"
NAME = "missing-grad-scaler"
SEVERITY = Severity.ERROR
SUMMARY = "A loss computed under float16 autocast is backpropagated without a GradScaler."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast", b"float16")
MODEL_WORDS: tuple[str, ...] = ("autocast", "MixedPrecisionPolicy")  # FSDP2's policy (checks/_fsdp.py)


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    in_tests = is_test_code(ctx.document.path)
    if model.framework_managed:
        return
    if model.has_scaler_evidence():
        yield from _paths_without_the_scaler(ctx, in_tests)
        return
    yield from _fsdp_float16(ctx, in_tests)
    for event in model.events_of("backward"):
        regions = sorted(event.reached, key=lambda r: r.span)
        risky = [r for r in regions if r.enabled is not False and (r.may_run_float16() or _may_choose_float16(r))]
        if not risky:
            continue
        definite = [r for r in risky if r.dtype == "float16" and r.enabled is True]
        region = (definite or risky)[0]
        loss = model.positions.segment(event.loss) if event.loss is not None else "the loss"
        yield ctx.report(
            event.span,
            f"`{loss}` is computed under {_describe(ctx, region)} (line {region.line}) and backpropagated without "
            "a GradScaler; scale it with a torch.amp.GradScaler (or autocast to bfloat16)"
            "\nfloat16 gradients below ~6e-8 flush to zero and training silently stalls"
            f"\nthe scaler: `scaler = torch.amp.GradScaler({_scaler_device(region)}, enabled=(dtype == "
            "torch.float16))`, `scaler.scale(loss).backward()`, `scaler.step(optimizer)`, `scaler.update()`",
            severity=Severity.INFO if in_tests else None if definite else Severity.WARNING,
        )


def _paths_without_the_scaler(ctx: CheckContext, in_tests: bool) -> Iterator[Finding]:
    """A file with a GradScaler that is None or disabled on some path (`GradScaler() if args.fp16 else None`):
    a plain backward on that path (`else: loss.backward()`) of a loss that float16 autocast computes there too."""
    from precisionlint.checks._scaler_paths import unscaled_paths
    from precisionlint.values.settings import document_finder

    model = ctx.script
    if set(model.scaler_wrapper_calls) - set(model.scaler_constructions):
        return  # a wrapper scales the loss (`loss_scaler(loss, optimizer)`): which path it covers is unknown
    finder = document_finder(ctx.document)
    if finder is None:
        return
    for event in model.events_of("backward"):
        if event.scaled_name is not None:
            continue  # `x.backward()` of `x = scaler.scale(loss)`
        found = unscaled_paths(model, finder, event)
        if found is None:
            continue
        region = found.regions[0]
        loss = model.positions.segment(event.loss) if event.loss is not None else "the loss"
        yield ctx.report(
            event.span,
            f"`{loss}` is computed under {_describe(ctx, region)} (line {region.line}) and backpropagated without "
            f"a GradScaler on the path where {found.guard}: the autocast runs float16 there too; scale the loss "
            "on this path as well, or turn the autocast off (or to bfloat16) wherever the scaler is"
            "\nfloat16 gradients below ~6e-8 flush to zero and training silently stalls",
            severity=Severity.INFO if in_tests else Severity.WARNING,
        )


def _scaler_device(region: AutocastRegion) -> str:
    """The device argument of the suggested GradScaler: the autocast's own. Where the device is computed
    (`device_type=device.type`), float16 may run on a device other than CUDA (nanoVLM's float16 arm runs only
    on MPS, whose GradScaler torch supports too), so the suggestion names the same expression, not "cuda"."""
    if region.device is not None:
        return f'"{region.device}"'
    call = region.call
    written = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device_type"), None)
    shown = dotted(written) if written is not None else None
    return shown if shown is not None else '"cuda"'


def _may_choose_float16(region: AutocastRegion) -> bool:
    """dtype= chosen at run time among alternatives that include float16 (a dtype table, a conditional)."""
    return region.dtype is None and region.dtype_explicit and "float16" in region.possible_dtypes


def _describe(ctx: CheckContext, region: AutocastRegion) -> str:
    if _may_choose_float16(region) and not region.may_run_float16():
        others = sorted(region.possible_dtypes - {"float16"})
        notes = [note for note in (f"or {', '.join(others)}" if others else "", _when(ctx, region)) if note]
        among = f" ({'; '.join(notes)})" if notes else ""
        return f"autocast whose dtype is chosen at run time and may be float16{among}"
    if region.dtype_explicit:
        return "float16 autocast"
    if region.device == "cuda":
        return "cuda autocast with no dtype, i.e. float16"
    return "autocast with no dtype, which is float16 when the device is cuda"


def _when(ctx: CheckContext, region: AutocastRegion) -> str:
    """Where float16 is one arm of `a if test else b` written in the call: the condition under which it runs
    (`torch.bfloat16 if device.type in ['cuda', 'cpu'] else torch.float16`: float16 only off CUDA and CPU)."""
    expr = region.dtype_expr
    if not isinstance(expr, ast.IfExp):
        return ""
    model = ctx.script
    body = model.resolver.possible_dtypes(expr.body, region.scope)
    orelse = model.resolver.possible_dtypes(expr.orelse, region.scope)
    test = model.positions.segment(expr.test)
    if "\n" in test or len(test) > 60:
        return ""
    if body == {"float16"} and "float16" not in orelse:
        return f"float16 when `{test}`"
    if orelse == {"float16"} and "float16" not in body:
        return f"float16 when `{test}` is false"
    return ""


def _fsdp_float16(ctx: CheckContext, in_tests: bool) -> Iterator[Finding]:
    """FSDP computing in float16 (`MixedPrecisionPolicy(param_dtype=torch.float16)`, FSDP1's `MixedPrecision`) in a
    file that backpropagates with a plain `.backward()` and has no GradScaler."""
    from precisionlint.checks._fsdp import policies

    model = ctx.script
    backward = model.events_of("backward")
    if not backward:
        return
    for policy in policies(ctx):
        if policy.param_dtype != "float16" or policy.param_span is None:
            continue
        name = "MixedPrecisionPolicy" if policy.kind == "fsdp2" else "MixedPrecision"
        scaler = "torch.amp.GradScaler(\"cuda\")" if policy.kind == "fsdp2" else "ShardedGradScaler()"
        yield ctx.report(
            policy.param_span,
            f"FSDP computes forward and backward in float16 (`{name}(param_dtype=torch.float16)`) and "
            f"`{model.positions.segment(backward[0].node)}` (line {backward[0].span.line}) runs with no GradScaler: "
            f"float16 gradients below ~6e-8 flush to zero and training silently stalls; use `scaler = {scaler}` "
            "with `scaler.scale(loss).backward()`, `scaler.step(optimizer)`, `scaler.update()` (or param_dtype="
            "torch.bfloat16)",
            severity=Severity.INFO if in_tests else None,
        )
