"""FSDP mixed-precision policies a script builds: FSDP2's `MixedPrecisionPolicy` (torch.distributed.fsdp, also
the older torch.distributed._composable.fsdp path) and FSDP1's `MixedPrecision`, with the dtypes written.

Semantics (torch/distributed/fsdp/_fully_shard/_fsdp_api.py): `param_dtype` is the dtype of the unsharded
parameters, "hence the dtype for forward/backward computation"; the optimizer steps the sharded parameters in
their original dtype. `reduce_dtype` "specifies the dtype for gradient reduction ... If this is None but
param_dtype is not None, then the reduction uses the compute dtype."
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Span

if TYPE_CHECKING:
    from precisionlint.checks import CheckContext

WORDS = ("MixedPrecisionPolicy", "MixedPrecision(")
_UNSET = "unset"


class Policy:
    __slots__ = ("kind", "call", "param_dtype", "param_span", "reduce_dtype", "span")

    def __init__(self, kind: str, call: ast.Call, param_dtype: str | None, param_span: Span | None,
                 reduce_dtype: str | None, span: Span) -> None:
        self.kind = kind  # "fsdp2" | "fsdp1"
        self.call = call
        self.param_dtype = param_dtype  # "float16" | "bfloat16" | "float32" | None (unset or unknown)
        self.param_span = param_span
        self.reduce_dtype = reduce_dtype  # a dtype, "unset", or None (written but unknown)
        self.span = span  # the call


def policies(ctx: CheckContext) -> list[Policy]:
    text = ctx.document.text
    if not any(word in text for word in WORDS):
        return []
    from precisionlint.script.scopes import scoped_nodes

    model = ctx.script
    found: list[Policy] = []
    for node, scope in scoped_nodes(ctx.document.tree, model.table):
        if not isinstance(node, ast.Call):
            continue
        qualname = model.resolver.qualname(node.func, scope) or ""
        if not qualname.startswith("torch.distributed."):
            continue
        name = qualname.rsplit(".", 1)[-1]
        if name not in ("MixedPrecisionPolicy", "MixedPrecision"):
            continue
        if any(kw.arg is None for kw in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            continue  # **kwargs: the dtypes may be there
        written = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        for index, field in enumerate(("param_dtype", "reduce_dtype")):
            if field not in written and len(node.args) > index:
                written[field] = node.args[index]
        param = written.get("param_dtype")
        reduce = written.get("reduce_dtype")
        found.append(Policy(
            "fsdp2" if name == "MixedPrecisionPolicy" else "fsdp1", node,
            model.resolver.dtype(param, scope) if param is not None else None,
            model.positions.span(param) if param is not None else None,
            (model.resolver.dtype(reduce, scope) if reduce is not None else _UNSET),
            model.positions.span(node),
        ))
    return found
