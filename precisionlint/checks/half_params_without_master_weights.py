"""## What it does
Finds a model cast to float16 or bfloat16 (`model.half()`, `.bfloat16()`, `.to(torch.float16)`,
`.to(dtype=torch.bfloat16)`) whose parameters are handed to a `torch.optim` optimizer in the same scope
(the same function, the module level, or the methods of one class for `self.model`), or to one of the optimizers of
other libraries that update the parameters in their own dtype: Transformers' own `AdamW`, bitsandbytes'
(`bnb.optim.AdamW8bit`, `PagedAdamW`, ...: their state is 8-bit or float32, the weights they write stay 16-bit) and
apex's fused optimizers (`FusedAdam`) without `master_weights=True`. Optimizers passed straight into a wrapper
(`FP16_Optimizer(torch.optim.Adam(...))`) and files using DeepSpeed, apex or Megatron-FSDP (whose `fully_shard`
keeps float32 main weights: `MixedPrecisionPolicy.main_params_dtype` defaults to `torch.float32` in
megatron/core/distributed/fsdp/src/megatron_fsdp/mixed_precision.py, and `fully_shard_optimizer` steps them), which
keep float32 master weights themselves, are not reported (a Megatron-FSDP file that writes `main_params_dtype=None`
is: its 16-bit weights are then the main weights); neither is a model also cast back with `.float()`, nor a cast in
an `if` branch that leaves the function (`return`, `raise`, `sys.exit()`) without stepping, backpropagating or
naming the optimizer: an inference or export path, which no step of the optimizer follows.

Weights created in 16 bits are found too:

- a model loaded with `from_pretrained(..., dtype=torch.bfloat16)` (or `torch_dtype=`, or the dtype's name as a
  string) whose parameters a `torch.optim` optimizer receives, or which a Transformers / TRL `...Trainer(model=...)`
  trains with its default torch AdamW (arguments written in the file, with no `deepspeed`, `fsdp` or other `optim`,
  and no `optimizers=`: arguments parsed from a command line may name DeepSpeed or FSDP);
- the same with `dtype="auto"`, or with no dtype where the project requires Transformers 5 or newer (whose
  default became `"auto"`), when the checkpoint is known to be bfloat16: a local folder whose `config.json` says
  so, or a hub id of a family published in bfloat16 (see fp16-on-bf16-checkpoint);
- `torch.set_default_dtype(torch.bfloat16)` (or float16) in a file that builds a `torch.optim` optimizer and never
  sets the default back to float32: every parameter created after it is 16-bit.

Not reported: quantized loads and files using PEFT or bitsandbytes (the trained adapters are float32), a
cast model whose optimizer is not torch.optim's in a file using PEFT, a `float16` load under `fp16=True`
(scaler-with-half-params reports that one as an error), and other optimizers, among them those built to update
16-bit weights (torchao's `_AdamW(..., bf16_stochastic_round=True)`, optimi's Kahan-summation optimizers).

## Why is this bad?
Mixed-precision training keeps the weights in float32 and computes in 16 bits (autocast). After `.half()`
the weights themselves are 16-bit and the optimizer adds each update to them in 16 bits: an update smaller
than half the spacing between neighbouring values is rounded away, which is up to 2**-11 of a weight's
magnitude in float16 and up to 2**-8 (about 0.4%) in bfloat16 (machine epsilon 2**-10 and 2**-7). With
learning rates of 1e-4 and below most updates vanish, so training slows down or stalls and ends at a worse
loss than the same run in mixed precision (some short runs with larger learning rates still converge); float16
weights also overflow above 65504. This is "pure"
half-precision training, useful for inference or with optimizers built for it (Kahan summation, stochastic
rounding), rarely what was meant.

In test code (`tests/`, `test_*.py`, `conftest.py`) the finding is informational: a test runs a step to check
the mechanics, not to train a model.

## Example
```python
model = Net().cuda().half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
```

## Use instead
```python
model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = criterion(model(x), y)
```

## Fix safety
No fix: float32 weights double the parameter memory, which may not fit.

`TrainingArguments(bf16=True)` does not add the missing copy: Accelerate's bf16 path only turns on autocast
(`native_amp`), the GradScaler is built for fp16 alone, and neither casts the model, so a model loaded in bfloat16
keeps its weights and Adam moments in bfloat16. verl loads its FSDP actor in float32 for this reason: "note that
we have to create model in fp32. Otherwise, the optimizer is in bf16, which is incorrect". Transformers 5 made
`dtype="auto"` the default of `from_pretrained` (huggingface/transformers#42805), so a script that relied on
float32 loading now loads most recent checkpoints in bfloat16 (sentence-transformers added `torch_dtype=
"float32"` to its training examples for this, huggingface/sentence-transformers#3773).

## References
- https://pytorch.org/docs/stable/amp.html
- Micikevicius et al., Mixed Precision Training (float32 master weights): https://arxiv.org/abs/1710.03740
- Machine epsilon of float16 (2**-10) and bfloat16 (2**-7), float16's largest value 65504:
  https://docs.pytorch.org/docs/stable/type_info.html
- Transformers 5 `dtype="auto"` default: `if dtype is None: dtype = "auto"`, `src/transformers/modeling_utils.py`
  lines 3934-3935 at v5.0.0 (https://github.com/huggingface/transformers/blob/v5.0.0/src/transformers/modeling_utils.py#L3934-L3935),
  from https://github.com/huggingface/transformers/pull/42805 (docs: https://github.com/huggingface/transformers/pull/42883)
- Accelerate's mixed-precision set-up: GradScaler only under fp16 (lines 562-583), bf16 only `native_amp`
  (lines 585-596), `src/accelerate/accelerator.py` at v1.14.0:
  https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/accelerator.py#L562-L596
- verl, `verl/workers/fsdp_workers.py` lines 313 and 326 at commit b178a3cd5 (line 326 at v0.7.0):
  https://github.com/volcengine/verl/blob/v0.7.0/verl/workers/fsdp_workers.py#L324-L326
- sentence-transformers loading in float32 for training: https://github.com/huggingface/sentence-transformers/pull/3773
- torchao `_AdamW(model_bf16.parameters(), bf16_stochastic_round=True)`, `torchao/optim/README.md` lines 77-80 at
  v0.18.0-rc1: https://github.com/pytorch/ao/blob/v0.18.0-rc1/torchao/optim/README.md#L77-L80
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Finding, Severity

if TYPE_CHECKING:
    from precisionlint.checks._loads import Load

CODE = "PL210"
NAME = "half-params-without-master-weights"
SEVERITY = Severity.WARNING
SUMMARY = "An optimizer updates float16/bfloat16 parameters directly, with no float32 master weights."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"half", b"float16")

_LOST = {"float16": "2**-11", "bfloat16": "2**-8 (~0.4%)"}
# Megatron-FSDP, in Megatron-LM and as the standalone megatron-fsdp package
_MEGATRON_FSDP = ("megatron.core.distributed.fsdp", "megatron_fsdp")


def check(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.script
    in_tests = is_test_code(ctx.document.path)
    if model.frameworks & {"deepspeed", "apex"}:
        return
    if model.table.imports.imports_any(_MEGATRON_FSDP) and "main_params_dtype=None" not in ctx.document.text:
        return  # Megatron-FSDP keeps float32 main weights unless told not to
    adapters = model.table.imports.imports_any(("peft",))
    for optimizer in model.optimizers:
        if optimizer.wrapped:
            continue
        if adapters and not optimizer.api.startswith("torch.optim."):
            continue  # bitsandbytes' optimizers over PEFT adapters, which PEFT keeps in float32
        casts = model.casts_of(optimizer, ("float16", "bfloat16"))
        if not casts:
            continue
        cast = casts[0]
        yield ctx.report(
            optimizer.span,
            f"`{optimizer.cls}` updates the {cast.dtype} parameters of `{cast.text}` (cast on line {cast.span.line}) "
            f"with no float32 master copy: updates below {_LOST[cast.dtype]} of a weight are rounded away, "
            "which can stall training or leave it at a worse loss; keep the model in float32 and use autocast for "
            "16-bit compute",
            severity=Severity.INFO if in_tests else None,
        )
    yield from _loaded(ctx, in_tests)
    yield from _default_dtype(ctx, in_tests)


def _related(a: str, b: str) -> bool:
    """The same module, or one contains the other (`model` and `model.encoder`)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


# -- weights created in 16 bits: loaded so, or built under a 16-bit default dtype ------------------------------

# Libraries whose trained parameters are float32 whatever the base model's dtype (PEFT keeps its adapters in
# float32 unless told otherwise), or that keep float32 master weights themselves.
_ADAPTERS = ("peft", "bitsandbytes")
# TrainingArguments keys under which the Trainer's optimizer does not update the loaded 16-bit parameters
# directly: a DeepSpeed or FSDP engine (float32 masters, or an upcast to float32) or an optimizer other than
# torch's AdamW (8-bit, Kahan-summation `adamw_anyprecision`, ...).
_ENGINES = ("deepspeed", "fsdp", "fsdp_config")
_TORCH_ADAMW = ("adamw_torch", "adamw_torch_fused")


def _loaded(ctx: CheckContext, in_tests: bool) -> Iterator[Finding]:
    from precisionlint.checks._loads import loads

    model = ctx.script
    if model.table.imports.imports_any(_ADAPTERS) or "peft_config" in ctx.document.text:
        return
    half = [load for load in loads(ctx) if load.dtype in _LOST and not load.quantized]
    if not half:
        return
    restored = [c.key for c in model.casts if c.dtype == "float32"]
    half = [load for load in half if not any(_related(load.key, key) for key in restored)]
    reported: set[str] = set()
    for optimizer in model.optimizers:
        if optimizer.wrapped or model.casts_of(optimizer, ("float16", "bfloat16")):
            continue  # not wrapped, or already reported for its cast
        load = next((ld for ld in half if any(_related(ld.key, key) for key in optimizer.param_keys)), None)
        if load is None:
            continue
        reported.add(load.key)
        yield ctx.report(
            optimizer.span,
            f"`{optimizer.cls}` updates the {load.dtype} parameters of `{load.text}` (loaded with {load.how}, line "
            f"{load.line}{_why_bf16(load)}) with no float32 master copy: updates below {_LOST[load.dtype]} of a "
            "weight are rounded away, which can stall training or leave it at a worse loss; load in float32 "
            "(`dtype=torch.float32`) and use autocast for 16-bit compute",
            severity=Severity.INFO if in_tests else None,
        )
    # a float16 load under `fp16=True` is scaler-with-half-params' error ("Attempting to unscale FP16 gradients")
    fp16 = any(s.framework == "hf" and s.name == "fp16" and s.value is True for s in ctx.settings)
    trainer = _trainer_over(ctx, [load for load in half if load.key not in reported
                                  and not (fp16 and load.dtype == "float16")])
    if trainer is not None:
        load, name = trainer
        yield ctx.report(
            load.span,
            f"`{load.text}` is loaded in {load.dtype} ({load.how}{_why_bf16(load)}) and trained by `{name}`, whose "
            "torch AdamW then updates the 16-bit weights with no float32 master copy (`bf16=True` is autocast, "
            f"not master weights): updates below {_LOST[load.dtype]} of a weight are rounded away; load in float32 "
            "(`dtype=torch.float32`) and keep `bf16=True`",
            severity=Severity.INFO if in_tests else None,
        )


def _why_bf16(load: Load) -> str:
    return f"; {load.checkpoint.evidence}" if load.checkpoint is not None else ""


def _trainer_over(ctx: CheckContext, half: list[Load]) -> tuple[Load, str] | None:
    """The first 16-bit load handed to a `...Trainer(model=...)` of Transformers or TRL whose arguments pick
    neither an engine that keeps float32 weights nor another optimizer."""
    if not half:
        return None
    from precisionlint.frameworks.call_words import HF_ARGUMENT_CLASSES
    from precisionlint.script.scopes import scoped_nodes

    model = ctx.script
    found: tuple[Load, str] | None = None
    written = False  # the arguments are written in this file (parsed from a command line, they may hold
    for node, scope in scoped_nodes(ctx.document.tree, model.table):  # --deepspeed or --fsdp)
        if not isinstance(node, ast.Call):
            continue
        name = _called(node.func)
        if name in HF_ARGUMENT_CLASSES:
            written = True
            if not _plain_adamw(node):
                return None  # DeepSpeed, FSDP or another optimizer: not what this rule can tell
        if not name.endswith("Trainer") or found is not None:
            continue
        argument = next((kw.value for kw in node.keywords if kw.arg == "model"), node.args[0] if node.args else None)
        if not isinstance(argument, (ast.Name, ast.Attribute)):
            continue
        key = f"{scope.qualname}:{model.positions.segment(argument)}"
        load = next((ld for ld in half if ld.key == key), None)
        if load is not None and not any(kw.arg in ("optimizers", "optimizer_cls_and_kwargs") for kw in node.keywords):
            found = (load, name)
    return found if written else None


def _called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _plain_adamw(call: ast.Call) -> bool:
    """TrainingArguments that train with torch's AdamW and no DeepSpeed or FSDP engine."""
    for keyword in call.keywords:
        if keyword.arg is None:
            return False  # **kwargs: anything may be there
        if keyword.arg in _ENGINES and not (isinstance(keyword.value, ast.Constant) and not keyword.value.value):
            return False
        if keyword.arg == "optim" and not (isinstance(keyword.value, ast.Constant)
                                           and keyword.value.value in _TORCH_ADAMW):
            return False
    return True


def _default_dtype(ctx: CheckContext, in_tests: bool) -> Iterator[Finding]:
    """`torch.set_default_dtype(torch.bfloat16)` in a file that builds a torch.optim optimizer, with no later
    return to float32: every parameter created after it is 16-bit."""
    model = ctx.script
    if not model.optimizers or "set_default_dtype" not in ctx.document.text:
        return
    from precisionlint.script.scopes import scoped_nodes

    calls: list[tuple[ast.Call, str]] = []
    for node, scope in scoped_nodes(ctx.document.tree, model.table):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if model.resolver.qualname(node.func, scope) != "torch.set_default_dtype":
            continue
        calls.append((node, model.resolver.dtype(node.args[0], scope) or "unknown"))
    if not calls or any(dtype not in _LOST for _, dtype in calls):
        return  # float32 set again somewhere (or a dtype not known): the order cannot be told
    optimizer = next((o for o in model.optimizers if not o.wrapped), None)
    if optimizer is None:
        return
    call, dtype = min(calls, key=lambda item: (item[0].lineno, item[0].col_offset))
    yield ctx.report(
        model.positions.span(call),
        f"`torch.set_default_dtype(torch.{dtype})` makes every parameter created after it {dtype}, and "
        f"`{optimizer.cls}` (line {optimizer.span.line}) updates them with no float32 master copy: updates below "
        f"{_LOST[dtype]} of a weight are rounded away; build the model in float32 and use autocast for 16-bit "
        "compute",
        severity=Severity.INFO if in_tests else None,
    )
