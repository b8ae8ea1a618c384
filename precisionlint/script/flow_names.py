"""What the flow analysis reads off statements and tests: the names and attribute chains an expression reads or
an assignment writes, the parts of a statement that run when it starts, and tests that answer the same twice.
"""

from __future__ import annotations

import ast

from precisionlint.script.names import dotted
from precisionlint.sources.python_index import walk


def header_parts(node: ast.stmt) -> list[ast.AST]:
    """The parts of a statement that run when it starts: everything but its nested statement lists (and never
    the body of a def, class or lambda)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    parts: list[ast.AST] = []
    for field_name, value in ast.iter_fields(node):
        if field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        if isinstance(value, ast.AST):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, ast.AST))
    return [p for p in parts if not isinstance(p, ast.Lambda)]


class ExpressionFacts:
    """What the flow analysis reads off an expression (or any part of a statement), found by one walk of it per
    file: the liveness pass, the taint slice, the taint of a value and the calls of a statement all ask about
    the same parts, and walked each of them again (four walks of every statement's expressions)."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        # id(node) -> (names and attribute chains it mentions, whether it holds a lambda, its calls in walk order)
        self._known: dict[int, tuple[frozenset[str], bool, tuple[ast.Call, ...]]] = {}

    def of(self, node: ast.AST) -> tuple[frozenset[str], bool, tuple[ast.Call, ...]]:
        found = self._known.get(id(node))
        if found is None:
            names: set[str] = set()
            deferred = False
            calls = []
            Name, Attribute, Lambda, Call, AST = ast.Name, ast.Attribute, ast.Lambda, ast.Call, ast.AST
            fields_of = _FIELDS
            # walk(node)'s breadth-first order, but a Name/Attribute chain (`self.model.encoder`) is read whole:
            # its inner attributes and its name would only give the prefixes of its text, added here
            queue: list[ast.AST] = [node]
            index = 0
            while index < len(queue):
                child = queue[index]
                index += 1
                kind = type(child)
                if kind is Name:
                    names.add(child.id)  # type: ignore[attr-defined]
                    continue
                if kind is Attribute:
                    text = dotted(child)  # type: ignore[arg-type]
                    if text:
                        names.add(text)
                        cut = text.rfind(".")
                        while cut != -1:
                            text = text[:cut]
                            names.add(text)
                            cut = text.rfind(".")
                        continue
                elif kind is Lambda:
                    deferred = True
                elif kind is Call:
                    calls.append(child)
                fields = fields_of.get(kind)
                if fields is None:
                    fields = fields_of[kind] = _fields(kind)
                for field in fields:
                    value = getattr(child, field, None)
                    if type(value) is list:
                        if (kind, field) in _MIXED_LISTS:
                            queue.extend(item for item in value if isinstance(item, AST))
                        else:
                            queue.extend(value)
                    elif isinstance(value, AST):
                        queue.append(value)
            found = self._known[id(node)] = (frozenset(names), deferred, tuple(calls))  # type: ignore[arg-type]
        return found


_FIELDS: dict[type, tuple[str, ...]] = {}
# Fields that hold only nodes without children of their own, none a name, a lambda or a call: the expression
# context under every name, attribute and subscript, and the operators. A constant has no child node at all.
_LEAVES = frozenset({"ctx", "op", "ops"})


# The lists of a node that may hold something other than a node (None for `**x` in a dict and a keyword-only
# argument without a default, names as strings): every other list of nodes holds nodes only.
_MIXED_LISTS = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults"), (ast.Global, "names"),
                          (ast.Nonlocal, "names"), (ast.MatchClass, "kwd_attrs")})


def _fields(kind: type) -> tuple[str, ...]:
    if kind is ast.Constant:
        return ()
    return tuple(field for field in kind._fields if field not in _LEAVES)  # type: ignore[attr-defined]


def strip_not(test: ast.expr) -> tuple[ast.expr, bool]:
    """`not not x` -> (x, False), `not x` -> (x, True)."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    return test, negated


def trackable(test: ast.expr) -> bool:
    """A test that gives the same answer twice unless a name it reads is reassigned: no calls, no await."""
    return not any(isinstance(n, (ast.Call, ast.Await, ast.NamedExpr, ast.Yield)) for n in walk(test))


def read_names(expr: ast.expr, facts: ExpressionFacts | None = None) -> set[str]:
    return set((facts or ExpressionFacts()).of(expr)[0])


def target_names(target: ast.expr, replaced: set[str], updated: set[str]) -> None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            target_names(element, replaced, updated)
    elif isinstance(target, ast.Starred):
        target_names(target.value, replaced, updated)
    elif isinstance(target, ast.Subscript):
        target_names(target.value, updated, updated)  # `d[k] = v` keeps d's other items
    else:
        text = dotted(target)
        if text:
            replaced.add(text)


def is_scale(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "scale"


def feed(
    feeds: dict[str, set[str]], targets: list[ast.expr], value: ast.expr, facts: ExpressionFacts | None = None
) -> None:
    """Record that the names written by `targets` are computed from the names `value` reads."""
    written: set[str] = set()
    for target in targets:
        target_names(target, written, written)
    read = (facts or ExpressionFacts()).of(value)[0]
    for name in written:
        feeds.setdefault(name, set()).update(read)
