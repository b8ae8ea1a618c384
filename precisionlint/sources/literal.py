"""ast.literal_eval of a parsed node, without the reference cycles of the standard one.

The standard function defines its helpers as closures that refer to each other: every call leaves a few
functions and cells in a cycle for the garbage collector. The analysis of one file calls it a few times; the
language server analyses a file at every change, and what it lets go should be freed at once. Same values,
and ValueError where the standard function raises it (callers catch it).
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def literal_eval(node: ast.AST) -> Any:
    """The value of a literal expression node, as ast.literal_eval(node) gives it."""
    if isinstance(node, ast.Expression):
        node = node.body
    return _convert(node)


def _malformed(node: object) -> ValueError:
    line = getattr(node, "lineno", None)
    return ValueError(f"malformed node or string{f' on line {line}' if line else ''}: {node!r}")


def _number(node: object) -> Any:
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float, complex):
        raise _malformed(node)
    return node.value


def _signed_number(node: object) -> Any:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        operand = _number(node.operand)
        return +operand if isinstance(node.op, ast.UAdd) else -operand
    return _number(node)


def _convert(node: object) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_convert(element) for element in node.elts)
    if isinstance(node, ast.List):
        return [_convert(element) for element in node.elts]
    if isinstance(node, ast.Set):
        return {_convert(element) for element in node.elts}
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set"
            and node.args == node.keywords == []):
        return set()
    if isinstance(node, ast.Dict):
        if len(node.keys) != len(node.values):
            raise _malformed(node)
        return dict(zip([_convert(key) for key in node.keys], [_convert(value) for value in node.values],
                        strict=True))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left = _signed_number(node.left)
        right = _number(node.right)
        if isinstance(left, (int, float)) and isinstance(right, complex):
            return left + right if isinstance(node.op, ast.Add) else left - right
    return _signed_number(node)
