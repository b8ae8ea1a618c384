"""Values under an assumption: what an expression evaluates to if one variable of the script holds one of its
candidate values. Two expressions that test the same variable (a GradScaler's `enabled=` and an autocast's
`dtype=`, both chosen by `args.dtype`) are then compared path by path: for each value the variable can take.

Evaluated: constants, dtypes (`torch.bfloat16`), the assumed variable (by its dotted text), names assigned once
(followed), `==`/`!=`/`in`/`not in`, `and`/`or`/`not`, `a if c else b`, literal lists/tuples/sets, and literal
tables indexed by an evaluated key. Anything else is UNKNOWN.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from precisionlint.script.names import dotted
from precisionlint.script.scopes import Scope, is_import_marker
from precisionlint.script.values import UNKNOWN, DictValue
from precisionlint.values.candidates import Finder

_MAX_DEPTH = 8


def variables(expr: ast.expr) -> set[str]:
    """The dotted names an expression reads (`args.dtype`, `dtype`), outermost chains only."""
    found: set[str] = set()
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = dotted(node)  # type: ignore[arg-type]
            if text is not None:
                found.add(text)
                continue
        if isinstance(node, ast.Call):
            stack.extend(node.args)
            stack.extend(k.value for k in node.keywords)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def known_values(finder: Finder, expr: ast.expr, scope: Scope) -> Iterator[tuple[str, list[Any]]]:
    """Each variable the expression reads (in name order) whose every value is known (an option's default and
    choices, the arms that assign it), with those values in a stable order; variables not fully known are left out.
    The question "under which value of its variables does this test hold?" starts here."""
    for name in sorted(variables(expr)):
        node = next((n for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)) and dotted(n) == name),
                    None)
        if node is None:
            continue
        found = finder.candidates(node, scope)  # type: ignore[arg-type]
        if found.complete and found.items:
            yield name, sorted(found.values, key=repr)


def evaluate(finder: Finder, expr: ast.expr, scope: Scope, assumed: dict[str, Any], depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        return UNKNOWN
    if isinstance(expr, (ast.Name, ast.Attribute)):
        text = dotted(expr)
        if text is not None and text in assumed:
            return assumed[text]
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name):
        owner, values = finder.table.values(scope, expr.id)
        if owner is not None and len(values) == 1 and values[0] is not None and not is_import_marker(values[0]):
            return evaluate(finder, values[0], owner, assumed, depth + 1)
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        items = [evaluate(finder, e, scope, assumed, depth + 1) for e in expr.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        left = evaluate(finder, expr.left, scope, assumed, depth + 1)
        right = evaluate(finder, expr.comparators[0], scope, assumed, depth + 1)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        op = expr.ops[0]
        try:
            if isinstance(op, (ast.Eq, ast.Is)):
                return left == right
            if isinstance(op, (ast.NotEq, ast.IsNot)):
                return left != right
            if isinstance(op, ast.In):
                return left in right
            if isinstance(op, ast.NotIn):
                return left not in right
        except TypeError:
            return UNKNOWN
        return UNKNOWN
    if isinstance(expr, ast.BoolOp):
        values = [evaluate(finder, v, scope, assumed, depth + 1) for v in expr.values]
        if any(v is UNKNOWN for v in values):
            return UNKNOWN
        return all(values) if isinstance(expr.op, ast.And) else any(values)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        operand = evaluate(finder, expr.operand, scope, assumed, depth + 1)
        return UNKNOWN if operand is UNKNOWN else not operand
    if isinstance(expr, ast.IfExp):
        test = evaluate(finder, expr.test, scope, assumed, depth + 1)
        if test is UNKNOWN:
            return UNKNOWN
        return evaluate(finder, expr.body if test else expr.orelse, scope, assumed, depth + 1)
    if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
        table = finder.table_of(expr.value, scope)
        if table is None:
            return UNKNOWN
        key = evaluate(finder, expr.slice, scope, assumed, depth + 1)
        if key is UNKNOWN:
            return UNKNOWN
        for entry_key, value in table[0]:
            if entry_key == key and not isinstance(entry_key, bool):
                return evaluate(finder, value, table[1], assumed, depth + 1)
        return UNKNOWN
    value = finder.resolver.value(expr, scope)
    return UNKNOWN if isinstance(value, DictValue) else value
