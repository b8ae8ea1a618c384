"""Where autograd records nothing: autocast regions entered under `torch.no_grad()` or `torch.inference_mode()`.

No gradient flows back through what such a region computes, even in the middle of a training loop (a frozen
VAE or teacher encoding the batch): its outputs are constants to the loss, so its float16 neither underflows
gradients (no GradScaler is needed for it) nor is a training precision to advise on.
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from precisionlint.script.model import AutocastRegion, RegionUse, ScriptModel

# Contexts and decorators under which autograd records nothing: `torch.no_grad()`, `torch.inference_mode()`,
# `torch.set_grad_enabled(False)`, by the last part of their name (any alias of torch).
_NO_GRAD = frozenset({"no_grad", "inference_mode"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def without_grad(model: ScriptModel, region: AutocastRegion) -> bool:
    """Every place `region` is entered runs without autograd: in the same `with` as `torch.no_grad()` or inside
    one, in a function decorated with `@torch.no_grad()`, or (a decorator use) its own decorated function is.
    (PixArt-alpha encodes images with its frozen VAE under `with torch.no_grad(): with
    torch.cuda.amp.autocast(...)` in the middle of its training loop.)"""
    return bool(region.uses) and all(_use_without_grad(model, use) for use in region.uses)


def _use_without_grad(model: ScriptModel, use: RegionUse) -> bool:
    if isinstance(use.node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # a decorator use: its own function
        return any(_disables_grad(decorator) for decorator in use.node.decorator_list)
    function = use.scope.node
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _disables_grad(decorator) for decorator in function.decorator_list):
        return True
    quiet = model.quiet_withs.get(id(function))
    if quiet is None:  # one walk per function, however many regions it enters
        quiet = model.quiet_withs[id(function)] = _quiet_withs(function)
    return id(use.node) in quiet


def _quiet_withs(function: ast.AST) -> set[int]:
    """The `with` statements of `function`'s own body (not of nested functions or classes) that disable
    autograd themselves or lie inside one that does. Only statement lists are followed (a `with` is a statement,
    never inside an expression): walking every child of every statement was a sixth of the flow analysis."""
    found: set[int] = set()
    body = getattr(function, "body", None)
    if type(body) is not list:  # a lambda's body is an expression
        return found
    stack: list[tuple[ast.stmt, bool]] = [(statement, False) for statement in body]
    while stack:
        node, quiet = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            quiet = quiet or any(_disables_grad(item.context_expr) for item in node.items)
            if quiet:
                found.add(id(node))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if type(block) is list:
                stack.extend((child, quiet) for child in block)
        for field in ("handlers", "cases"):  # an except clause's or a match case's body
            for part in getattr(node, field, None) or ():
                stack.extend((child, quiet) for child in part.body)
    return found


def _disables_grad(expression: ast.expr) -> bool:
    call = expression if isinstance(expression, ast.Call) else None
    func = call.func if call is not None else expression
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    first = call.args[0] if call is not None and call.args else None
    if name in _NO_GRAD:
        # inference_mode(False) / inference_mode(mode=False) turns it off again
        flags = [first] if first is not None else []
        flags += [k.value for k in call.keywords if k.arg == "mode"] if call is not None else []
        return not any(isinstance(flag, ast.Constant) and flag.value is False for flag in flags)
    return name == "set_grad_enabled" and isinstance(first, ast.Constant) and first.value is False
