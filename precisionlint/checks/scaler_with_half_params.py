"""## What it does
Finds float16 parameters trained with loss scaling: a model loaded with `torch_dtype=torch.float16` (or
`dtype=`), or cast with `.half()` / `.to(torch.float16)`, whose parameters go to an optimizer that a
`GradScaler` steps or unscales in the same file; or such a model handed to a Hugging Face `Trainer` whose
`TrainingArguments` say `fp16=True`. Files using PEFT adapters or quantized loading (whose trainable
parameters are kept in float32), DeepSpeed or apex are not reported, nor a model cast back with `.float()`.

## Why is this bad?
`GradScaler.unscale_` refuses float16 gradients: the first `scaler.step(optimizer)` (or `unscale_`) raises
`ValueError: Attempting to unscale FP16 gradients.`, the most reported AMP error. Loss scaling exists for
float32 master weights computing in float16 under autocast; with float16 weights there is no float32 copy to
unscale into. The `fp16=True` of `TrainingArguments` uses the same scaler, with the same error.

## Example
```python
model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
scaler = torch.amp.GradScaler("cuda")
```

## Use instead
```python
model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float32)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
scaler = torch.amp.GradScaler("cuda")  # with torch.autocast("cuda", dtype=torch.float16) around the forward
```

## Fix safety
No fix: float32 weights double the parameter memory, which may not fit; bf16 without a scaler is the other way.

## References
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
- https://github.com/pytorch/pytorch/blob/main/torch/amp/grad_scaler.py (`Attempting to unscale FP16 gradients.`)
- https://discuss.huggingface.co/t/valueerror-attempting-to-unscale-fp16-gradients/
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity, Span
from precisionlint.script.scopes import scoped_nodes

CODE = "PL403"
NAME = "scaler-with-half-params"
SEVERITY = Severity.ERROR
SUMMARY = "A GradScaler (or fp16=True) over float16 parameters: 'Attempting to unscale FP16 gradients'."
TARGET = "script"
READS = "torch, hf"
PYTHON_WORDS: tuple[bytes, ...] = (b"GradScaler", b"half", b"float16", b"fp16")
MODEL_WORDS: tuple[str, ...] = ("GradScaler",)

_KEEPS_FP32_TRAINABLE = ("peft", "bitsandbytes", "deepspeed", "apex")
_QUANTIZED = ("load_in_8bit", "load_in_4bit", "quantization_config")


class _Load:
    def __init__(self, key: str, text: str, span: Span, line: int) -> None:
        self.key = key
        self.text = text
        self.span = span  # the dtype argument
        self.line = line


def check(ctx: CheckContext) -> Iterator[Finding]:
    text = ctx.document.text
    if "float16" not in text and "half" not in text:
        return
    model = ctx.script
    imports = model.table.imports
    if imports.imports_any(_KEEPS_FP32_TRAINABLE) or "prepare_model_for_kbit_training" in text:
        return
    loads = _half_loads(ctx)
    restored = [c.key for c in model.casts if c.dtype == "float32"]
    stepped = _stepped_optimizers(ctx)
    for optimizer in model.optimizers:
        if optimizer.wrapped or optimizer.key is None:
            continue
        name = optimizer.key.split(":", 1)[-1]
        # the same variable in the same function, or the same attribute (`self.optimizer`) in any method
        scaler_line = stepped.get(optimizer.key) or (stepped.get(name) if "." in name else None)
        if scaler_line is None:
            continue
        casts = model.casts_of(optimizer, ("float16",))
        half = [(c.span, c.text, c.span.line) for c in casts]
        half += [(load.span, load.text, load.line) for load in loads
                 if load.key in optimizer.param_keys and not any(_related(load.key, r) for r in restored)]
        if not half:
            continue
        span, what, line = half[0]
        yield ctx.report(
            span,
            f"`{what}` holds float16 parameters (line {line}), and `{optimizer.cls}` over them is stepped through "
            f"a GradScaler (line {scaler_line}): the first step raises \"ValueError: Attempting to unscale FP16 "
            "gradients\"; keep the weights in float32 and autocast the forward to float16, or train in bf16 "
            "without a scaler",
        )
    yield from _hf_trainer(ctx, loads)


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _stepped_optimizers(ctx: CheckContext) -> dict[str, int]:
    """Optimizers that an enabled GradScaler steps or unscales (by key, "function:name", and by the attribute
    as written, "self.optimizer"), with the line of that call."""
    found: dict[str, int] = {}
    for scaler in ctx.script.scalers.values():
        if scaler.enabled is False or not scaler.constructed:
            continue
        for event in scaler.events:
            if event.kind in ("scaler_step", "unscale") and event.optimizer:
                found.setdefault(f"{event.scope.qualname}:{event.optimizer}", event.span.line)
                if "." in event.optimizer:
                    found.setdefault(event.optimizer, event.span.line)
    return found


def _half_loads(ctx: CheckContext) -> list[_Load]:
    """`x = Something.from_pretrained(..., torch_dtype=torch.float16)`, not quantized."""
    text = ctx.document.text
    if text.isascii() and "from_pretrained" not in text:
        return []  # no such call (a name that is not ASCII may be normalised to it by the parser)
    model = ctx.script
    positions = model.positions
    loads: list[_Load] = []
    for node, scope in scoped_nodes(ctx.document.tree, ctx.script.table):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        call = node.value
        while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in (
                "cuda", "to", "train", "eval", "requires_grad_"):
            call = call.func.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "from_pretrained"):
            continue
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        if any(k in keywords for k in _QUANTIZED):
            continue
        dtype_expr = keywords.get("torch_dtype", keywords.get("dtype"))
        if dtype_expr is None:
            continue
        dtype = model.resolver.dtype(dtype_expr, scope)
        if dtype is None and isinstance(dtype_expr, ast.Constant) and dtype_expr.value in ("float16", "half"):
            dtype = "float16"
        if dtype != "float16":
            continue
        target = node.targets[0]
        text = positions.segment(target)
        if not isinstance(target, (ast.Name, ast.Attribute)):
            continue
        loads.append(_Load(f"{scope.qualname}:{text}", text, positions.span(dtype_expr), node.lineno))
    return loads



def _hf_trainer(ctx: CheckContext, loads: list[_Load]) -> Iterator[Finding]:
    """`Trainer(model=m, args=TrainingArguments(fp16=True))` with `m` loaded in float16."""
    if not loads:
        return
    fp16 = [s for s in ctx.settings if s.framework == "hf" and s.name == "fp16" and s.value is True]
    if not fp16:
        return
    model = ctx.script
    for node, scope in scoped_nodes(ctx.document.tree, ctx.script.table):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not name.endswith("Trainer"):
            continue
        argument = next((kw.value for kw in node.keywords if kw.arg == "model"), node.args[0] if node.args else None)
        if argument is None:
            continue
        key = f"{scope.qualname}:{model.positions.segment(argument)}"
        load = next((load for load in loads if load.key == key), None)
        if load is None:
            continue
        yield ctx.report(
            load.span,
            f"`{load.text}` is loaded in float16 (line {load.line}) and trained by `{name}` with `fp16=True` "
            f"(line {fp16[0].span.line}), whose GradScaler raises \"ValueError: Attempting to unscale FP16 "
            "gradients\" at the first step; load it in float32 (mixed precision keeps a float32 copy) or use "
            "`bf16=True`",
        )
        return
