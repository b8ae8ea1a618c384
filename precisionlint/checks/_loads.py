"""Models a script loads with `from_pretrained`, and the dtype their parameters are created in.

The dtype is the one written (`dtype=` / `torch_dtype=`: a torch dtype, or its name as a string), `"auto"`
(the checkpoint's own dtype, read from a local `config.json` or a cited hub family, precisionlint.checks.
_checkpoints), or, with none written, float32, except under Transformers 5, whose default became `"auto"`
(transformers PR #42883 documents it: "`auto` is the default now in `from_pretrained`"). A load whose dtype
cannot be told is left out: unknown is not wrong.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from precisionlint.core.model import Span

if TYPE_CHECKING:
    from precisionlint.checks import CheckContext
    from precisionlint.checks._checkpoints import Checkpoint

QUANTIZED = ("quantization_config", "load_in_4bit", "load_in_8bit")
_CHAIN = ("cuda", "to", "train", "requires_grad_", "eval")  # `from_pretrained(...).cuda()` loads the same model
_NAMES = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float32": "float32", "float": "float32", "fp32": "float32"}


class Load:
    """`x = Something.from_pretrained(name, ...)`, assigned to a name or an attribute."""

    __slots__ = ("key", "text", "dtype", "how", "span", "line", "quantized", "checkpoint")

    def __init__(self, key: str, text: str, dtype: str, how: str, span: Span, line: int, quantized: bool,
                 checkpoint: Checkpoint | None) -> None:
        self.key = key  # "scope:name", as the script model keys the modules an optimizer receives
        self.text = text  # the name as written
        self.dtype = dtype  # "float16" | "bfloat16" | "float32"
        self.how = how  # how the dtype was chosen, for a message: "torch_dtype=torch.bfloat16", "dtype='auto'"
        self.span = span  # the dtype argument, or the call when none is written
        self.line = line
        self.quantized = quantized
        self.checkpoint = checkpoint  # what says the checkpoint is bfloat16, for "auto" and the default


def loads(ctx: CheckContext) -> list[Load]:
    text = ctx.document.text
    if text.isascii() and "from_pretrained" not in text:
        return []
    from precisionlint.checks._checkpoints import bf16_checkpoint
    from precisionlint.project import disk_path
    from precisionlint.script.scopes import scoped_nodes

    model = ctx.script
    positions = model.positions
    auto_default: bool | None = None
    found: list[Load] = []
    for node, scope in scoped_nodes(ctx.document.tree, model.table):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if not isinstance(target, (ast.Name, ast.Attribute)):
            continue
        call = node.value
        while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _CHAIN:
            call = call.func.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "from_pretrained"):
            continue
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        if any(kw.arg is None for kw in call.keywords):
            continue  # **kwargs: the dtype may be there
        quantized = any(k in keywords for k in QUANTIZED)
        written = keywords.get("dtype", keywords.get("torch_dtype"))
        checkpoint = None
        if written is None:
            if auto_default is None:
                auto_default = _transformers_5(ctx)
            if not auto_default:
                continue
            how = "no dtype, which loads the checkpoint's own dtype in Transformers 5"
            dtype = "auto"
        else:
            resolved = model.resolver.dtype(written, scope)
            if resolved is None:
                value = model.resolver.value(written, scope)
                resolved = _NAMES.get(value.removeprefix("torch."), "auto" if value == "auto" else None) \
                    if isinstance(value, str) else None
            if resolved is None:
                continue
            dtype = resolved
            how = f"{_keyword(call, written)}={positions.segment(written)}"
        if dtype == "auto":
            named = call.args[0] if call.args else keywords.get("pretrained_model_name_or_path")
            if named is None:
                continue
            checkpoint = bf16_checkpoint(ctx.project, disk_path(ctx.document), model.resolver.value(named, scope))
            if checkpoint is None:
                continue
            dtype = "bfloat16"
        span = positions.span(written) if written is not None else positions.span(call)
        segment = positions.segment(target)
        found.append(Load(f"{scope.qualname}:{segment}", segment, dtype, how, span, node.lineno, quantized,
                          checkpoint))
    return found


def _keyword(call: ast.Call, value: ast.expr) -> str:
    return next((kw.arg for kw in call.keywords if kw.value is value and kw.arg), "dtype")


def _transformers_5(ctx: CheckContext) -> bool:
    """Every Transformers the project declares is 5 or newer."""
    found = ctx.project.version("transformers")
    return found is not None and found.all_at_least((5,))
