"""Candidate values of an expression, each with where it was written and under which condition.

The Finder follows, within one file and a bounded depth:
  - literals and dtypes (`torch.float16` through any alias) written at the expression;
  - `a if c else b` (each arm, with `c` or `not c`), `x or default`;
  - names: the assignments that may reach the use (an assignment that every path to the use passes, after an
    earlier one, hides it), each under the `if` tests around it; arms whose test is a known constant are dropped;
  - `self.x`: every `self.x = ...` of the class and its class-level value;
  - literal dicts, lists and tuples indexed by a known key or by a key chosen at run time (every entry the key
    can pick), and `.get(key, default)`;
  - calls of functions of the same file: their return values (helpers), depth-bounded;
  - parameters: their default and the arguments of the file's calls of the function;
  - options the script declares (declared.py): `args.x` of argparse, click options, dataclass fields,
    `os.environ.get(name, default)`.

Each answer is memoised per expression and scope, and every step adds one to the depth, so the cost is bounded
by the file's size times a constant.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from precisionlint.script.positions import Positions
from precisionlint.script.scopes import Scope, ScopeTable, is_import_marker
from precisionlint.script.values import UNKNOWN, DictValue, Resolver
from precisionlint.values.candidate import (
    ARGUMENT,
    ARM,
    ASSIGNMENT,
    ATTRIBUTE,
    HELPER,
    LITERAL,
    NONE,
    OR_DEFAULT,
    PARAMETER,
    TABLE,
    Candidate,
    Candidates,
)
from precisionlint.values.declared import (
    Declarations,
    environment_default,
    option_candidates,
    parameter_declarations,
)

if TYPE_CHECKING:
    from precisionlint.core.model import Document

_MAX_DEPTH = 8
_MAX_CANDIDATES = 16  # more alternatives than this: the value is not one a user chose, call it unknown


class Finder:
    """Candidates of expressions of one parsed file (its ScopeTable and Resolver, shared with the script model)."""

    def __init__(self, tree: ast.Module, table: ScopeTable, resolver: Resolver, document: Document) -> None:
        self.tree = tree
        self.table = table
        self.resolver = resolver
        self.document = document
        self.text = document.text
        self._positions: Positions | None = None
        # Readers of config files the script loads (`cfg = yaml.safe_load(open("train.yaml"))` ...
        # `cfg["train"]["precision"]`): each takes a subscript or attribute expression and its scope and answers
        # its candidates (kind CONFIG_KEY, with `path`, `key_path` and `span`), or None when it does not know it.
        self.config_readers: list[Callable[[ast.expr, Scope], Candidates | None]] = []
        self._memo: dict[tuple[int, int], Candidates] = {}
        self._declarations: Declarations | None = None
        self._calls: dict[str, list[tuple[ast.Call, Scope]]] | None = None
        self._line_starts: list[int] | None = None
        self._launch_lines: list[Any] | None = None  # values.launched: the project's lines that start this file

    # -- the entry point --------------------------------------------------------------------------------------
    def candidates(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Candidates:
        if depth > _MAX_DEPTH:
            return NONE
        key = (id(expr), id(scope))
        known = self._memo.get(key)
        if known is not None:
            return known
        self._memo[key] = NONE  # a cycle (`x = f(x)`) meets itself again as unknown
        try:
            found = self._of(expr, scope, depth)
        except (TypeError, ValueError, ArithmeticError, RecursionError):
            found = NONE
        if len(found.items) > _MAX_CANDIDATES:
            found = NONE
        self._memo[key] = found
        return found

    def scope_at(self, node: ast.AST) -> Scope:
        """The innermost function or class of the file whose statements hold `node`."""
        line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
        best = self.table.module
        best_size: tuple[int, int] | None = None
        for scope in self.table.by_node.values():
            owner = scope.node
            if scope.kind == "module" or not hasattr(owner, "end_lineno"):
                continue
            start = (owner.lineno, owner.col_offset)  # type: ignore[attr-defined]
            end = (owner.end_lineno, owner.end_col_offset)  # type: ignore[attr-defined]
            if start <= (line, col) < end:
                size = (end[0] - start[0], end[1] - start[1])
                if best_size is None or size < best_size:
                    best, best_size = scope, size
        return best

    def segment(self, node: ast.AST) -> str:
        if self._positions is None:
            self._positions = Positions(self.document)
        return " ".join(self._positions.segment(node).split())

    def condition_text(self, test: ast.expr, holds: bool) -> str:
        shown = self.segment(test)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return f"`{shown}`" if holds else f"not `{shown}`"

    # -- one step ---------------------------------------------------------------------------------------------
    def _of(self, expr: ast.expr, scope: Scope, depth: int) -> Candidates:
        if isinstance(expr, ast.Constant):
            return Candidates((Candidate(expr.value, expr, LITERAL),), True)
        if isinstance(expr, ast.IfExp):
            return self._conditional(expr, scope, depth)
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
            return self._or(expr, scope, depth)
        if isinstance(expr, ast.Name):
            return self._name(expr, scope, depth)
        if isinstance(expr, ast.Attribute):
            dtype = self.resolver._from_qualname(self.resolver.qualname(expr, scope))
            if dtype is not UNKNOWN:
                return Candidates((Candidate(dtype, expr, LITERAL),), True)  # `torch.float16`, any alias
            found = self._attribute(expr, scope, depth)
            return found if found.items or not found.complete else self._static(expr, scope)
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, scope, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        if isinstance(expr, ast.JoinedStr) or isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            built = self._built_string(expr, scope, depth)
            if built is not None:
                return built
        return self._static(expr, scope)

    def _built_string(self, expr: ast.JoinedStr | ast.BinOp, scope: Scope, depth: int) -> Candidates | None:
        """A string built from candidates: `f"{bits}-mixed"`, `prefix + "16"`. Each combination of the parts'
        candidates is one candidate, written at the whole expression, on every path only if each part is."""
        parts: list[Candidates] = []
        pieces = expr.values if isinstance(expr, ast.JoinedStr) else [expr.left, expr.right]
        for piece in pieces:
            if isinstance(piece, ast.FormattedValue):
                if piece.format_spec is not None or piece.conversion not in (-1, 115):
                    return None
                piece = piece.value
            found = self.candidates(piece, scope, depth + 1)
            if not found.items:
                return None
            if isinstance(expr, ast.BinOp) and not all(isinstance(c.value, str) for c in found.items):
                return None  # arithmetic, not a string: the Resolver's business
            parts.append(found)
        combined: list[tuple[str, tuple[str, ...], bool]] = [("", (), True)]
        for part in parts:
            combined = [(text + str(c.value), conditions + c.conditions, every and c.every_path)
                        for text, conditions, every in combined for c in part.items]
            if len(combined) > _MAX_CANDIDATES:
                return NONE
        complete = all(p.complete for p in parts)
        single = len(combined) == 1
        items = tuple(Candidate(text, expr, LITERAL, conditions, every and single)
                      for text, conditions, every in combined)
        return Candidates(items, complete)

    def _static(self, expr: ast.expr, scope: Scope) -> Candidates:
        """What the Resolver knows for certain (dtypes, arithmetic on constants, `getattr(torch, "bfloat16")`)."""
        value = self.resolver.value(expr, scope)
        if value is UNKNOWN or isinstance(value, DictValue):
            return NONE
        return Candidates((Candidate(value, expr, LITERAL),), True)

    def _conditional(self, expr: ast.IfExp, scope: Scope, depth: int) -> Candidates:
        test = self.resolver.truth(expr.test, scope)
        if test is not None:
            return self.candidates(expr.body if test else expr.orelse, scope, depth + 1)
        body = self.candidates(expr.body, scope, depth + 1)
        orelse = self.candidates(expr.orelse, scope, depth + 1)
        items = [c.weakened(self.condition_text(expr.test, True), ARM) for c in body.items]
        items += [c.weakened(self.condition_text(expr.test, False), ARM) for c in orelse.items]
        return Candidates(tuple(items), body.complete and orelse.complete)

    def _or(self, expr: ast.BoolOp, scope: Scope, depth: int) -> Candidates:
        items: list[Candidate] = []
        complete = True
        for index, operand in enumerate(expr.values):
            found = self.candidates(operand, scope, depth + 1)
            last = index == len(expr.values) - 1
            if last:
                earlier = " or ".join(self.segment(v) for v in expr.values[:index])
                condition = f"`{earlier}` is empty" if len(earlier) <= 60 else None
                items += [c.weakened(condition, OR_DEFAULT) for c in found.items]
                complete = complete and found.complete
                break
            truthy = [c for c in found.items if c.value]
            if found.complete and found.items and len(truthy) == len(found.items):
                if index == 0:
                    return Candidates(tuple(truthy), True)  # always truthy: the rest is never read
                items += [c.weakened() for c in truthy]
                break
            items += [c.weakened() for c in truthy]
            complete = complete and found.complete
        return Candidates(tuple(items), complete)

    # -- names ------------------------------------------------------------------------------------------------
    def _name(self, expr: ast.Name, scope: Scope, depth: int) -> Candidates:
        owner, values = self.table.values(scope, expr.id)
        if owner is None or (values and all(is_import_marker(v) for v in values)):
            return self._static(expr, scope)  # an import (`from torch import float16 as half`) or a builtin
        if owner.kind == "module" and owner.poisoned:
            return NONE
        items: list[Candidate] = []
        complete = True
        if expr.id in owner.params:
            found = self._parameter(owner, expr.id, depth)
            items += found.items
            complete = found.complete
            values = owner.bindings.get(expr.id, [])
        reaching = self._reaching(expr, scope, owner, values)
        if reaching is None:
            return NONE
        single = len(reaching) == 1 and not items and expr.id not in owner.params
        for value in reaching:
            if value is None or is_import_marker(value):
                complete = False
                continue
            if not self._dead(value, owner):
                complete = self._gather(value, owner, depth, single, ASSIGNMENT, items) and complete
        return Candidates(tuple(items), complete)

    def _dead(self, value: ast.AST, owner: Scope) -> bool:
        """Written under an `if` whose test is a known constant that rules its branch out (`if False:`,
        `DEBUG = False` ... `if DEBUG:`)."""
        conditions, _ = self.table.context(value)
        for test, holds in conditions:
            truth = self.resolver.truth(test, owner)
            if truth is not None and truth != holds:
                return True
        return False

    def _reaching(self, use: ast.Name, scope: Scope, owner: Scope,
                  values: list[ast.expr | None]) -> list[ast.expr | None] | None:
        """The assignments of `owner` that may reach `use`. In the function (or module) that holds the use and
        binds the name, outside loops: an assignment after the use does not reach it, and an assignment that
        every path to the use passes (under the same `if` tests as the use, or fewer) hides the ones before it.
        Elsewhere (a module's name read in a function) every assignment counts, but for the hiding."""
        if not values:
            return []
        if any(v is None or is_import_marker(v) for v in values):
            return values  # a loop target, an augmented assignment: its position is not recorded, keep all
        position = (use.lineno, use.col_offset)
        same = owner is scope
        use_conditions = self._conditions_of(use, owner) if same else ()
        if use_conditions is None:
            return values  # the use sits in a loop: a later assignment may reach it on the next turn
        ordered = sorted(values, key=lambda v: (v.lineno, v.col_offset))  # type: ignore[union-attr]
        if same:
            # an assignment reaches what follows its value (`x = a if c else x` reads the earlier x)
            ordered = [v for v in ordered
                       if (v.end_lineno, v.end_col_offset) <= position]  # type: ignore[union-attr]
        start = 0
        for index, value in enumerate(ordered):
            conditions, in_loop = self.table.context(value)  # type: ignore[arg-type]
            if in_loop:
                continue
            ids = tuple((id(t), h) for t, h in conditions)
            if ids == use_conditions[: len(ids)]:
                start = index  # every path to the use passes this assignment
        return list(ordered[start:])

    def _conditions_of(self, use: ast.AST, owner: Scope) -> tuple[tuple[int, bool], ...] | None:
        """The `if` tests (by id, with the branch) around `use` inside `owner`'s own statements; None when a loop
        of `owner` holds it."""
        holder = owner.node
        body: list[ast.stmt] = (holder.body if isinstance(holder, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef))
                                else [])
        line = use.lineno  # type: ignore[attr-defined]
        found: list[tuple[int, bool]] = []
        while body:
            statement = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
            if statement is None or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                break
            if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
                return None
            if isinstance(statement, ast.If):
                if statement.body and statement.body[0].lineno <= line <= (statement.body[-1].end_lineno or 0):
                    found.append((id(statement.test), True))
                    body = statement.body
                elif statement.orelse and statement.orelse[0].lineno <= line:
                    found.append((id(statement.test), False))
                    body = statement.orelse
                else:
                    break
                continue
            if isinstance(statement, (ast.With, ast.AsyncWith)):
                body = statement.body
                continue
            if isinstance(statement, ast.Try):
                body = [*statement.body, *statement.orelse, *statement.finalbody,
                        *(s for h in statement.handlers for s in h.body)]
                continue
            break
        return tuple(found)

    def _parameter(self, function: Scope, name: str, depth: int) -> Candidates:
        """A parameter: its default, a click option's default, and the arguments of the file's calls."""
        node = function.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return NONE
        declared = parameter_declarations(self, node, name)
        if declared is not None:
            return declared
        items: list[Candidate] = []
        default = _default_of(node.args, name)
        if default is not None:
            found = self.candidates(default, function.parent or self.table.module, depth + 1)
            items += [c.weakened(kind=PARAMETER) for c in found.items]
        position = _position_of(node.args, name)
        # Callers in other files, or a framework calling back, may pass anything: a parameter's candidates are
        # never complete, and none of them is on every path.
        for call, caller in self.calls_of(node.name):
            argument = _argument(call, name, position)
            if argument is not None:
                found = self.candidates(argument, caller, depth + 1)
                items += [c.weakened(kind=ARGUMENT) for c in found.items]
        return Candidates(tuple(items), False)

    def calls_of(self, name: str) -> list[tuple[ast.Call, Scope]]:
        """The calls of the file written `name(...)` or `self.name(...)`, with the scope of each (one walk)."""
        if self.text.isascii() and self.text.count(name + "(") < 2:
            return []  # never written: no walk (a test function's parameters, a `main(args)` no one calls here)
        if self._calls is None:
            from precisionlint.script.scopes import scoped_nodes

            calls: dict[str, list[tuple[ast.Call, Scope]]] = {}
            for node, scope in scoped_nodes(self.tree, self.table):
                if type(node) is ast.Call:
                    func = node.func  # type: ignore[attr-defined]
                    if isinstance(func, ast.Name):
                        calls.setdefault(func.id, []).append((node, scope))  # type: ignore[arg-type]
                    elif isinstance(func, ast.Attribute):
                        calls.setdefault(func.attr, []).append((node, scope))  # type: ignore[arg-type]
            self._calls = calls
        return self._calls.get(name, [])

    # -- attributes, tables, calls ----------------------------------------------------------------------------
    def _attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> Candidates:
        base = expr.value
        if not isinstance(base, ast.Name):
            return NONE
        cls = self.resolver.self_class(scope, base.id)
        if cls is not None:
            values = [(v, cls) for v in cls.bindings.get(expr.attr, [])] + list(cls.attrs.get(expr.attr, []))
            if not values:
                return NONE
            items: list[Candidate] = []
            complete = True
            single = len(values) == 1
            for value, owner in values:
                if value is None or self._dead(value, owner):
                    complete = complete and value is not None
                    continue
                found = self.candidates(value, owner, depth + 1)
                complete = complete and found.complete
                conditions, _ = self.table.context(value)
                shown = tuple(self.condition_text(t, h) for t, h in conditions)
                for candidate in found.items:
                    if single and not shown:
                        items.append(candidate.through(ATTRIBUTE))
                    else:
                        weakened = candidate.weakened(kind=ATTRIBUTE)
                        items.append(weakened._replace(conditions=(*shown, *weakened.conditions)))
            return Candidates(tuple(items), complete)
        found = option_candidates(self, base, expr.attr, scope, depth)
        return found if found.items or not self.config_readers else self._config(expr, scope)

    def _table(self, expr: ast.expr, scope: Scope, depth: int) -> tuple[ast.expr, Scope] | None:
        """The literal dict, list or tuple a name (assigned once) or the expression itself is."""
        for _ in range(4):
            if isinstance(expr, (ast.Dict, ast.List, ast.Tuple)):
                return expr, scope
            if not isinstance(expr, ast.Name):
                return None
            owner, values = self.table.values(scope, expr.id)
            if owner is None or len(values) != 1 or values[0] is None or is_import_marker(values[0]):
                return None
            if owner.kind == "module" and owner.poisoned:
                return None
            expr, scope = values[0], owner
        return None

    def table_of(self, expr: ast.expr, scope: Scope) -> tuple[list[tuple[Any, ast.expr]], Scope] | None:
        """The entries of the literal table an expression is (or a name assigned one once), with their scope."""
        found = self._table(expr, scope, 0)
        if found is None:
            return None
        entries = self._entries(found[0], found[1])
        return (entries, found[1]) if entries is not None else None

    def _entries(self, table: ast.expr, scope: Scope) -> list[tuple[Any, ast.expr]] | None:
        """(key, value expression) of a literal table; None when a key is unknown or a `**` spreads another."""
        if isinstance(table, ast.Dict):
            entries = []
            for key, value in zip(table.keys, table.values, strict=True):
                if key is None:
                    return None
                known = self.resolver.value(key, scope)
                if known is UNKNOWN or isinstance(known, DictValue):
                    return None
                entries.append((known, value))
            return entries
        if isinstance(table, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in table.elts):
                return None
            return list(enumerate(table.elts))
        return None

    def _lookup(self, table_expr: ast.expr, key_expr: ast.expr, scope: Scope, depth: int,
                default: ast.expr | None = None) -> Candidates:
        found_table = self._table(table_expr, scope, depth)
        if found_table is None:
            return NONE
        table, table_scope = found_table
        entries = self._entries(table, table_scope)
        if entries is None:
            return NONE
        keys = self.candidates(key_expr, scope, depth + 1)
        key_text = self.segment(key_expr)
        items: list[Candidate] = []
        complete = True
        if keys.complete and keys.items:
            wanted = list(keys.items)  # an option's choices too: the launch picks any of them
            single = len(wanted) == 1 and wanted[0].every_path
            for key in wanted:
                hit = next((value for k, value in entries if k == key.value and not isinstance(k, bool)), None)
                if hit is None:
                    if default is not None:
                        found = self.candidates(default, scope, depth + 1)
                        items += [c.weakened(kind=TABLE) for c in found.items]
                        complete = complete and found.complete
                    continue
                found = self.candidates(hit, table_scope, depth + 1)
                complete = complete and found.complete
                for candidate in found.items:
                    if single:
                        items.append(candidate.through(TABLE))
                    else:
                        items.append(candidate.weakened(f"`{key_text}` is {key.value!r}", TABLE))
            return Candidates(tuple(items), complete)
        # A key chosen at run time: any entry (and the default), none on every path.
        for key, value in entries:
            found = self.candidates(value, table_scope, depth + 1)
            complete = complete and found.complete
            items += [c.weakened(f"`{key_text}` is {key!r}", TABLE) for c in found.items]
        if default is not None:
            found = self.candidates(default, scope, depth + 1)
            items += [c.weakened(kind=TABLE) for c in found.items]
            complete = complete and found.complete
        return Candidates(tuple(items), complete)

    def _subscript(self, expr: ast.Subscript, scope: Scope, depth: int) -> Candidates:
        if isinstance(expr.slice, ast.Slice):
            return NONE
        found = self._lookup(expr.value, expr.slice, scope, depth)
        return found if found.items or not self.config_readers else self._config(expr, scope)

    def _config(self, expr: ast.expr, scope: Scope) -> Candidates:
        for reader in self.config_readers:
            found = reader(expr, scope)
            if found is not None:
                return found
        return NONE

    def _call(self, expr: ast.Call, scope: Scope, depth: int) -> Candidates:
        func = expr.func
        if (isinstance(func, ast.Attribute) and func.attr == "get" and 1 <= len(expr.args) <= 2
                and not expr.keywords):
            environment = environment_default(self, expr, scope, depth)
            if environment is not None:
                return environment
            default = expr.args[1] if len(expr.args) == 2 else ast.Constant(value=None)
            return self._lookup(func.value, expr.args[0], scope, depth, default)
        if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "getenv":
            return environment_default(self, expr, scope, depth) or NONE
        function = self.resolver.function_for(func, scope)
        if function is None:
            return self._static(expr, scope)
        return self._returns(function, depth)

    def _returns(self, function: Scope, depth: int) -> Candidates:
        returns = function.returns
        if not returns or _is_generator(function.node):
            return NONE
        items: list[Candidate] = []
        complete = _ends_in_return(function.node)
        single = len(returns) == 1 and complete
        for value in returns:
            if not self._dead(value, function):
                complete = self._gather(value, function, depth, single, HELPER, items) and complete
        return Candidates(tuple(items), complete)

    def _gather(self, value: ast.expr, owner: Scope, depth: int, single: bool, kind: str,
                items: list[Candidate]) -> bool:
        """Adds the candidates of one of several values an expression may take (a reaching assignment, a
        returned expression) to `items`, each through `kind`: kept as it is when it is the only value and holds
        unconditionally, else weakened and given the conditions under which this value is the one. Returns
        whether its candidates are complete."""
        found = self.candidates(value, owner, depth + 1)
        conditions, _ = self.table.context(value)
        shown = tuple(self.condition_text(test, holds) for test, holds in conditions)
        for candidate in found.items:
            if single and not shown:
                items.append(candidate.through(kind))
            else:
                weakened = candidate.weakened(kind=kind)
                items.append(weakened._replace(conditions=(*shown, *weakened.conditions)))
        return found.complete


def _default_of(args: ast.arguments, name: str) -> ast.expr | None:
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        if arg.arg == name:
            return args.defaults[index - offset] if index >= offset else None
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if arg.arg == name:
            return default
    return None


def _position_of(args: ast.arguments, name: str) -> int | None:
    positional = [*args.posonlyargs, *args.args]
    for index, arg in enumerate(positional):
        if arg.arg == name:
            return index
    return None


def _argument(call: ast.Call, name: str, position: int | None) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None:
        # `self.f(x)` passes x as the second parameter of `def f(self, x)`
        shift = 1 if isinstance(call.func, ast.Attribute) else 0
        index = position - shift
        if 0 <= index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            return call.args[index]
    return None


def _is_generator(node: ast.AST) -> bool:
    stack = list(getattr(node, "body", []))
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(item))
    return False


def _ends_in_return(node: ast.AST) -> bool:
    """The function's last statement returns or raises (no path falls off its end returning None); an if/else
    whose both branches do counts."""
    body = getattr(node, "body", [])
    return bool(body) and _block_returns(body)


def _block_returns(body: list[ast.stmt]) -> bool:
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and _block_returns(last.body) and _block_returns(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _block_returns(last.body)
    return False
