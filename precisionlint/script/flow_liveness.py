"""Where each fact of the flow analysis dies: the last statement of a function that may read a name or evaluate
a tracked test (flow_function.py drops a fact after it, so that a state holds only what is still live).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from precisionlint.script.flow_names import ExpressionFacts, strip_not

_FOREVER = 1 << 60
_STATEMENT_LISTS = ("body", "orelse", "finalbody")
_FIELDS: dict[type, tuple[str, ...]] = {}


def liveness(
    body: list[ast.stmt], tracked: set[str], test_key: Callable[[ast.expr], str | None],
    facts: ExpressionFacts | None = None,
) -> tuple[dict[int, int], dict[str, int], dict[str, int]]:
    """Number the statements of a function in source order (pre-order) and find, for every name, the last
    position that may read it, and for every tracked test the last position that may evaluate it.

    A read inside a loop counts at the loop's end (the next iteration reads it again); a read inside a nested
    def, class or lambda counts forever (it may run any time later). Iterative, so a 3,000-branch elif chain
    does not recurse 3,000 deep.
    Returns (id(statement) -> last position inside it, name -> last read, test -> last evaluation)."""
    facts = facts or ExpressionFacts()
    ends: dict[int, int] = {}
    reads: list[tuple[str, int, ast.stmt | None]] = []  # (name, position, outermost enclosing loop)
    tests: list[tuple[str, int, ast.stmt | None]] = []
    counter = 0
    stack: list[tuple[bool, ast.stmt, ast.stmt | None]] = [(True, s, None) for s in reversed(body)]
    while stack:
        opening, node, loop = stack.pop()
        if not opening:
            ends[id(node)] = counter - 1
            continue
        position = counter
        counter += 1
        stack.append((False, node, loop))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            reads.extend((name, _FOREVER, None) for name in facts.of(node)[0])
            continue
        inner = loop if loop is not None else node if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) else None
        children: list[ast.stmt] = []
        headers: list[ast.AST] = []
        kind = type(node)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = kind._fields
        for field_name in fields:  # ast.iter_fields without its generator
            value = getattr(node, field_name, None)
            if value is None:
                continue
            if field_name in _STATEMENT_LISTS and isinstance(value, list):
                children.extend(value)
            elif field_name == "handlers":
                for handler in value:
                    headers.extend(x for x in (handler.type,) if x is not None)
                    children.extend(handler.body)
            elif field_name == "cases":
                for case in value:
                    headers.extend(x for x in (case.pattern, case.guard) if x is not None)
                    children.extend(case.body)
            elif isinstance(value, ast.AST):
                headers.append(value)
            elif isinstance(value, list):
                headers.extend(v for v in value if isinstance(v, ast.AST))
        for header in headers:
            names, deferred, _ = facts.of(header)
            at = _FOREVER if deferred else position
            reads.extend((name, at, inner) for name in names)
        if isinstance(node, ast.If) and tracked:
            test, _ = strip_not(node.test)
            key = test_key(test)
            if key is not None:
                if key in tracked:
                    tests.append((key, position, inner))
        for child in reversed(children):
            stack.append((True, child, inner))

    def settle(items: list[tuple[str, int, ast.stmt | None]]) -> dict[str, int]:
        last: dict[str, int] = {}
        for name, position, loop in items:
            if loop is not None and position != _FOREVER:
                # one past the loop's last statement: the fact must survive that statement to reach the
                # back edge, where the next iteration reads it again
                position = ends[id(loop)] + 1
            if position > last.get(name, -1):
                last[name] = position
        return last

    return ends, settle(reads), settle(tests)
