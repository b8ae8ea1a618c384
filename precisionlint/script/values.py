"""Static values of expressions: what a linter may know without running the script.

Resolved: literals, arithmetic on literals, `torch.float16`-style dtypes (through any import alias), module
constants, class constants, `self.X` assigned the same constant everywhere, `torch.device("cuda").type`,
`getattr(torch, "bfloat16")`, dict literals indexed by a constant
(`{'float16': torch.float16, ...}[dtype]`), and `==` / `in` / `not` / `and` / `or` / `x if c else y` on those.
Everything else (a CLI flag, a config file, a function result) is UNKNOWN.
"""

from __future__ import annotations

import ast
import operator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.records import FrozenRecord
from precisionlint.script.names import DTYPES, canonical, dotted
from precisionlint.script.scopes import Scope, ScopeTable, is_import_marker

if TYPE_CHECKING:
    from typing import Any


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
_MAX_DEPTH = 12


# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers). Values compare and hash by their fields, as frozen dataclasses did.


class Dtype(FrozenRecord):
    __slots__ = ("name",)
    _fields = __slots__

    def __init__(self, name: str) -> None:
        self.name = name  # "float16" | "bfloat16" | "float32" | "float64"


class Device(FrozenRecord):
    __slots__ = ("type",)
    _fields = __slots__

    def __init__(self, type: str) -> None:  # noqa: A002 - the field's name, as torch.device spells it
        self.type = type  # "cuda", "cpu", ...


class DictValue(FrozenRecord):
    __slots__ = ("node", "scope")
    _fields = __slots__

    def __init__(self, node: ast.Dict, scope: Scope) -> None:
        self.node = node
        self.scope = scope


_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.eq,  # for the constants we resolve (None, True, dtypes) identity is equality
    ast.IsNot: operator.ne,
    ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a),
}
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


class Resolver:
    def __init__(self, table: ScopeTable) -> None:
        self.table = table
        # Bindings never change after the first walk, so a name resolves the same way every time it is asked;
        # the caches also cut cycles (`node = node.parent`): a name met again while resolving resolves to unknown.
        self._qualnames: dict[tuple[int, str], str | None] = {}
        self._values: dict[tuple[int, str], Any] = {}
        # Answers to outermost qualname() questions, by expression and scope: the walk asks most of them twice
        # (an attribute when visited, then as the callee of its call). Only outermost answers are kept and
        # reused: inside a resolution the depth limit and the cycle guard above may answer differently.
        self._outer: dict[tuple[int, int], str | None] = {}
        self._function_names: frozenset[str] | None = None  # the names of the file's defs, when first asked

    # -- qualified names ------------------------------------------------------------------------------------
    def qualname(self, expr: ast.expr, scope: Scope, depth: int = 0) -> str | None:
        """ "torch.cuda.amp.autocast" for `ac`, `amp.autocast`, `th.cuda.amp.autocast`, `my_autocast = ac`..."""
        if depth == 0:
            key = (id(expr), id(scope))
            outer = self._outer
            if key in outer:
                return outer[key]
            found = outer[key] = self._qualname(expr, scope, 0)
            return found
        return self._qualname(expr, scope, depth)

    def _qualname(self, expr: ast.expr, scope: Scope, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Attribute):
            base = self.qualname(expr.value, scope, depth + 1)
            return canonical(f"{base}.{expr.attr}") if base else None
        if not isinstance(expr, ast.Name):
            return None
        owner, values = self.table.values(scope, expr.id)
        if owner is None or (values and all(is_import_marker(v) for v in values)):
            return self.table.imports.resolve_name(expr.id)
        key = (id(owner), expr.id)
        if key in self._qualnames:
            return self._qualnames[key]
        self._qualnames[key] = None
        # `autocast = torch.cuda.amp.autocast`: a plain alias assigned once
        names = set()
        for value in values:
            if value is None or is_import_marker(value) or not isinstance(value, (ast.Name, ast.Attribute)):
                return None
            names.add(self.qualname(value, owner, depth + 1))
        found = names.pop() if len(names) == 1 else None
        self._qualnames[key] = found
        return found

    # -- values ---------------------------------------------------------------------------------------------
    def value(self, expr: ast.expr | None, scope: Scope, depth: int = 0) -> Any:
        if expr is None or depth > _MAX_DEPTH:
            return UNKNOWN
        try:
            return self._value(expr, scope, depth)
        except (TypeError, ValueError, ArithmeticError, OverflowError):
            return UNKNOWN

    def truth(self, expr: ast.expr | None, scope: Scope) -> bool | None:
        found = self.value(expr, scope)
        if found is UNKNOWN or isinstance(found, DictValue):
            return None
        return bool(found)

    def dtype(self, expr: ast.expr | None, scope: Scope) -> str | None:
        found = self.value(expr, scope)
        return found.name if isinstance(found, Dtype) else None

    def _value(self, expr: ast.expr, scope: Scope, depth: int) -> Any:
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, ast.Name):
            return self._name(expr, scope, depth)
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, scope, depth)
        if isinstance(expr, ast.Dict):
            return DictValue(expr, scope)
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, scope, depth)
        if isinstance(expr, ast.IfExp):
            test = self.value(expr.test, scope, depth + 1)
            if test is not UNKNOWN:
                return self.value(expr.body if test else expr.orelse, scope, depth + 1)
            body = self.value(expr.body, scope, depth + 1)
            return body if body == self.value(expr.orelse, scope, depth + 1) else UNKNOWN
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            compare = _COMPARE.get(type(expr.ops[0]))
            left = self.value(expr.left, scope, depth + 1)
            right = self.value(expr.comparators[0], scope, depth + 1)
            if compare is None or left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            if isinstance(left, DictValue) or isinstance(right, DictValue):
                return UNKNOWN
            return bool(compare(left, right))
        if isinstance(expr, ast.UnaryOp):
            operand = self.value(expr.operand, scope, depth + 1)
            if operand is UNKNOWN:
                return UNKNOWN
            if isinstance(expr.op, ast.Not):
                return not operand
            if isinstance(expr.op, ast.USub) and _number(operand):
                return -operand
            if isinstance(expr.op, ast.UAdd) and _number(operand):
                return operand
            return UNKNOWN
        if isinstance(expr, ast.BoolOp):
            values = [self.value(v, scope, depth + 1) for v in expr.values]
            if any(v is UNKNOWN for v in values):
                return UNKNOWN
            return all(values) if isinstance(expr.op, ast.And) else any(values)
        if isinstance(expr, ast.BinOp):
            binary = _BINARY.get(type(expr.op))
            left = self.value(expr.left, scope, depth + 1)
            right = self.value(expr.right, scope, depth + 1)
            if binary is None or not (_number(left) and _number(right)):
                return UNKNOWN
            if isinstance(expr.op, ast.Pow) and abs(right) > 4096:
                return UNKNOWN
            return binary(left, right)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        return UNKNOWN

    def _name(self, expr: ast.Name, scope: Scope, depth: int) -> Any:
        owner, values = self.table.values(scope, expr.id)
        if owner is None or (values and all(is_import_marker(v) for v in values)):
            return self._from_qualname(self.table.imports.resolve_name(expr.id))
        if owner.kind == "module" and owner.poisoned:
            return UNKNOWN
        key = (id(owner), expr.id)
        if key in self._values:
            return self._values[key]
        self._values[key] = UNKNOWN
        found = self._same(values, owner, depth)
        self._values[key] = found
        return found

    def _same(self, values: list[ast.expr | None], owner: Scope, depth: int) -> Any:
        """The one value every binding agrees on, or UNKNOWN."""
        if not values:
            return UNKNOWN
        found: Any = UNKNOWN
        for index, value in enumerate(values):
            if value is None or is_import_marker(value):
                return UNKNOWN
            resolved = self.value(value, owner, depth + 1)
            if resolved is UNKNOWN or (index and resolved != found):
                return UNKNOWN
            found = resolved
        return found

    def _attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> Any:
        known = self._from_qualname(self.qualname(expr, scope))
        if known is not UNKNOWN:
            return known
        base = expr.value
        if isinstance(base, ast.Name):
            cls = self.self_class(scope, base.id)
            if cls is not None:
                return self._class_attr(cls, expr.attr, depth, include_instance=True)
            owner, values = self.table.values(scope, base.id)
            if owner is not None and values == [None]:
                defined = owner.functions.get(base.id)
                if defined is not None and defined.kind == "class":
                    return self._class_attr(defined, expr.attr, depth, include_instance=False)
        if expr.attr == "type":
            device = self.value(base, scope, depth + 1)
            if isinstance(device, Device):
                return device.type
        return UNKNOWN

    def self_class(self, scope: Scope, name: str) -> Scope | None:
        """The class that `name` (usually `self`) is the instance of, seen from a method or a closure in it."""
        current: Scope | None = scope
        while current is not None and current.kind == "function":
            cls = current.enclosing_class
            if cls is not None:
                return cls if current.self_name == name else None
            current = current.parent
        return None

    def _class_attr(self, cls: Scope, attr: str, depth: int, include_instance: bool) -> Any:
        values: list[tuple[ast.expr | None, Scope]] = [(v, cls) for v in cls.bindings.get(attr, [])]
        if include_instance:
            values += cls.attrs.get(attr, [])
        if not values:
            return UNKNOWN
        found: Any = UNKNOWN
        for index, (value, owner) in enumerate(values):
            if value is None:
                return UNKNOWN
            resolved = self.value(value, owner, depth + 1)
            if resolved is UNKNOWN or (index and resolved != found):
                return UNKNOWN
            found = resolved
        return found

    def _subscript(self, expr: ast.Subscript, scope: Scope, depth: int) -> Any:
        base = self.value(expr.value, scope, depth + 1)
        if not isinstance(base, DictValue):
            return UNKNOWN
        key = self.value(expr.slice, scope, depth + 1)
        if key is UNKNOWN:
            return UNKNOWN
        for key_node, value_node in zip(base.node.keys, base.node.values, strict=True):
            if key_node is None:
                return UNKNOWN  # `{**other}`: the dict may hold anything
            candidate = self.value(key_node, base.scope, depth + 1)
            if candidate is UNKNOWN:
                return UNKNOWN
            if candidate == key:
                return self.value(value_node, base.scope, depth + 1)
        return UNKNOWN

    def _call(self, expr: ast.Call, scope: Scope, depth: int) -> Any:
        callee = self.qualname(expr.func, scope)
        if callee == "getattr" or (isinstance(expr.func, ast.Name) and expr.func.id == "getattr"):
            if len(expr.args) == 2 and not expr.keywords:
                module = self.qualname(expr.args[0], scope)
                attr = self.value(expr.args[1], scope, depth + 1)
                if module and isinstance(attr, str):
                    return self._from_qualname(canonical(f"{module}.{attr}"))
            return UNKNOWN
        if callee == "torch.device" and expr.args and not expr.keywords:
            kind = self.value(expr.args[0], scope, depth + 1)
            if isinstance(kind, str):
                return Device(kind.split(":", 1)[0])
        return UNKNOWN

    def possible_dtypes(self, expr: ast.expr, scope: Scope, depth: int = 0) -> frozenset[str]:
        """Every dtype `expr` may evaluate to where it is chosen at run time: both arms of `a if c else b`, every
        value of a dict of dtypes indexed by an unknown key (`{"float16": torch.float16, ...}[args.dtype]`), every
        value a name is assigned. Partial: alternatives that cannot be resolved are left out."""
        if depth > _MAX_DEPTH:
            return frozenset()
        known = self.dtype(expr, scope)
        if known is not None:
            return frozenset({known})
        if isinstance(expr, ast.IfExp):
            return self.possible_dtypes(expr.body, scope, depth + 1) | self.possible_dtypes(
                expr.orelse, scope, depth + 1
            )
        if isinstance(expr, ast.Subscript):
            table = self.value(expr.value, scope, depth + 1)
            if isinstance(table, DictValue):
                found: set[str] = set()
                for value in table.node.values:
                    found |= self.possible_dtypes(value, table.scope, depth + 1)
                return frozenset(found)
            return frozenset()
        if isinstance(expr, ast.Name):
            owner, values = self.table.values(scope, expr.id)
            if owner is None:
                return frozenset()
            key = (id(owner), "possible:" + expr.id)
            if key in self._values:
                return self._values[key]  # type: ignore[no-any-return]
            self._values[key] = frozenset()
            collected: set[str] = set()
            for bound in values:
                if bound is not None and not is_import_marker(bound):
                    collected |= self.possible_dtypes(bound, owner, depth + 1)
            self._values[key] = frozenset(collected)
            return frozenset(collected)
        return frozenset()

    def bound_values(self, expr: ast.expr, scope: Scope) -> list[tuple[ast.expr | None, Scope]]:
        """The values a name or `self.attr` may hold, with the scope each was assigned in (None: unknown)."""
        if isinstance(expr, ast.Name):
            owner, values = self.table.values(scope, expr.id)
            if owner is None:
                return []
            return [(None if is_import_marker(v) else v, owner) for v in values]
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            cls = self.self_class(scope, expr.value.id)
            if cls is not None:
                found: list[tuple[ast.expr | None, Scope]] = [(v, cls) for v in cls.bindings.get(expr.attr, [])]
                return found + list(cls.attrs.get(expr.attr, []))
        return []

    # -- identities ---------------------------------------------------------------------------------------
    def ref_key(self, expr: ast.expr, scope: Scope) -> str | None:
        """A stable identity for a variable or attribute chain: "<scope>:name" for a variable (the scope that
        binds it), "<Class>.self.attr" for an attribute of `self` in any method of that class."""
        text = dotted(expr)
        if text is None:
            return None
        root, _, rest = text.partition(".")
        cls = self.self_class(scope, root)
        if cls is not None:
            return f"{cls.qualname}.self" + (f".{rest}" if rest else "")
        owner = self.table.lookup(scope, root) or self.table.module
        return f"{owner.qualname}:{text}"

    def function_for(self, func: ast.expr, scope: Scope) -> Scope | None:
        """The def a call refers to: `f(...)` or `self.f(...)` defined in this file."""
        names = self._function_names
        if names is None:
            names = self._function_names = frozenset(
                s.name for s in self.table.by_node.values() if s.kind == "function")
        # what is found below is a def named like the call's last name: most calls name none of the file's defs
        last = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None  # type: ignore[attr-defined]
        if last not in names:
            return None
        found: Scope | None = None
        if isinstance(func, ast.Name):
            owner = self.table.lookup(scope, func.id)
            if owner is not None and owner.bindings.get(func.id) == [None]:
                found = owner.functions.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            cls = self.self_class(scope, func.value.id) or self._instance_class(func.value, scope)
            if cls is not None:
                found = cls.functions.get(func.attr)
        return found if found is not None and found.kind == "function" else None

    def _instance_class(self, name: ast.Name, scope: Scope) -> Scope | None:
        """The class of this file that `name` is an instance of, when every value it is assigned is a call of
        that class (`trainer = Trainer(model)` ... `trainer.backward_step(loss)`)."""
        owner, values = self.table.values(scope, name.id)
        if owner is None or not values:
            return None
        found: Scope | None = None
        for value in values:
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                return None
            cls_owner = self.table.lookup(owner, value.func.id)
            cls = cls_owner.functions.get(value.func.id) if cls_owner is not None else None
            if cls is None or cls.kind != "class" or (found is not None and cls is not found):
                return None
            found = cls
        return found

    @staticmethod
    def _from_qualname(qualname: str | None) -> Any:
        if qualname is None:
            return UNKNOWN
        name = DTYPES.get(qualname)
        return Dtype(name) if name else UNKNOWN


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
