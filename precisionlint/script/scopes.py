"""Scopes and bindings: what each name (and each `self.attr`) of a script may be bound to.

This is the first of the two walks of build_script_model: it records, flow-insensitively, every value assigned
to a name in each module / class / function scope, the `self.X = ...` assignments of every method of a class,
each function's return expressions, and the import table. The second walk (collect.py) resolves names
through it. A binding whose value cannot be known (a loop target, `x += 1`, a parameter) is recorded as
None, which makes every lookup of that name UNKNOWN: one unknown assignment is enough to stop a guess.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.patterns import lazy_pattern
from precisionlint.core.records import Record, ValueRecord
from precisionlint.script.names import ImportTable
from precisionlint.script.version_tests import Gate, is_version_test
from precisionlint.sources.python_index import FastNodeVisitor, lines_holding, subclasses_of

if TYPE_CHECKING:
    from typing import Any, Literal

    ScopeKind = Literal["module", "class", "function"]
else:
    ScopeKind = str  # one of those names: at run time only annotations name the type (core/light_typing.py)
# A value a name was assigned, or None when it cannot be known statically.
Bound = ast.expr | None

_IMPORT = ast.Constant(value=None)  # marker: the name is bound by an import (see ImportTable)
_DATA_CLASS_BASES = ("BaseModel", "NamedTuple", "TypedDict", "BaseSettings", "Struct", "Enum")


# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers).


class Scope(Record):
    __slots__ = ("kind", "name", "node", "parent", "bindings", "params", "global_names", "functions", "returns",
                 "attrs", "fields_are_constants", "self_name", "poisoned")
    _fields = __slots__

    def __init__(
        self,
        kind: ScopeKind,
        name: str,
        node: ast.AST,
        parent: Scope | None,
        bindings: dict[str, list[Bound]] | None = None,
        params: set[str] | None = None,
        global_names: set[str] | None = None,
        functions: dict[str, Scope] | None = None,
        returns: list[ast.expr] | None = None,
        attrs: dict[str, list[tuple[Bound, Scope]]] | None = None,
        fields_are_constants: bool = True,
        self_name: str | None = None,
        poisoned: bool = False,
    ) -> None:
        self.kind = kind
        self.name = name
        self.node = node
        self.parent = parent
        self.bindings: dict[str, list[Bound]] = {} if bindings is None else bindings
        self.params: set[str] = set() if params is None else params
        self.global_names: set[str] = set() if global_names is None else global_names
        # defs directly inside this scope, by name
        self.functions: dict[str, Scope] = {} if functions is None else functions
        self.returns: list[ast.expr] = [] if returns is None else returns  # functions: the returned expressions
        # classes: `self.X = value` from every method, and whether class-level annotated fields are constants
        self.attrs: dict[str, list[tuple[Bound, Scope]]] = {} if attrs is None else attrs
        self.fields_are_constants = fields_are_constants
        self.self_name = self_name  # methods: the name of the first parameter
        self.poisoned = poisoned  # module: exec()/globals()/star-import may rebind any global

    @property
    def qualname(self) -> str:
        if self.parent is None:
            return "<module>"
        outer = self.parent.qualname
        return self.name if outer == "<module>" else f"{outer}.{self.name}"

    @property
    def enclosing_class(self) -> Scope | None:
        """The class of a method (the direct parent of this function scope)."""
        if self.kind == "function" and self.parent is not None and self.parent.kind == "class":
            return self.parent
        return None

    def bind(self, name: str, value: Bound) -> None:
        self.bindings.setdefault(name, []).append(value)

    def is_import(self, value: Bound) -> bool:
        return value is _IMPORT


def is_compat_handler(handler: ast.ExceptHandler) -> bool:
    """`except ImportError:` / `except (AttributeError, ImportError):` / bare except: the fallback branch."""
    kind = handler.type
    if kind is None:
        return True
    names = [kind] if not isinstance(kind, ast.Tuple) else list(kind.elts)
    for item in names:
        text = item.attr if isinstance(item, ast.Attribute) else item.id if isinstance(item, ast.Name) else ""
        if text in ("ImportError", "ModuleNotFoundError", "AttributeError", "Exception"):
            return True
    return False


# `torch.__version__`, `TORCH_VERSION`, `_TORCH_GREATER_EQUAL_2_4` (Lightning), `is_torch_greater_or_equal_than_2_4`
# (Transformers), `torch_version_lt_2_4`, `TORCH_2_4`: names that only a version switch reads.
_VERSION_NAME = lazy_pattern(
    globals(), "_VERSION_NAME", r"version|greater|less|_ge_|_lt_|torch_?\d|\d_\d", re.IGNORECASE)


def is_compat_test(test: ast.expr) -> bool:
    """An `if` that picks an API by version or by feature test (`hasattr(torch, "amp")`)."""
    AST, Name, Attribute, Call = ast.AST, ast.Name, ast.Attribute, ast.Call
    search = _VERSION_NAME.search
    stack: list[ast.AST] = [test]
    while stack:  # every node of the test (ast.walk's set, in another order: any one decides)
        node = stack.pop()
        kind = type(node)
        if kind is Name:
            if search(node.id):  # type: ignore[attr-defined]
                return True
            continue  # its only child is the context
        if kind is Attribute and search(node.attr):  # type: ignore[attr-defined]
            return True
        if kind is Call and type(node.func) is Name and node.func.id in ("hasattr", "getattr"):  # type: ignore[attr-defined]
            return True
        if kind is ast.Constant:
            continue
        for name in kind._fields:
            value = getattr(node, name, None)
            if isinstance(value, AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, AST))
    return False


# The `if` tests a statement is nested in, outermost first, each with the branch taken (True: the body).
Conditions = tuple[tuple[ast.expr, bool], ...]


class ScopeTable(ValueRecord):
    __slots__ = ("module", "imports", "by_node", "compat_ifs", "contexts")
    _fields = __slots__

    def __init__(self, module: Scope, imports: ImportTable, by_node: dict[int, Scope],
                 compat_ifs: dict[int, bool] | None = None,
                 contexts: dict[int, tuple[Conditions, bool]] | None = None) -> None:
        self.module = module
        self.imports = imports
        self.by_node = by_node
        # id(if statement) -> is_compat_test(its test)
        self.compat_ifs: dict[int, bool] = {} if compat_ifs is None else compat_ifs
        # id(an assigned or returned value) -> (the `if` tests around its statement, whether a loop is around
        # it): the value layer (precisionlint.values) names the condition under which a value is chosen.
        # Only values written under an `if` or a loop are recorded: the rest are unconditional.
        self.contexts: dict[int, tuple[Conditions, bool]] = {} if contexts is None else contexts

    def context(self, value: ast.AST) -> tuple[Conditions, bool]:
        return self.contexts.get(id(value), ((), False))

    def scope_of(self, node: ast.AST) -> Scope | None:
        return self.by_node.get(id(node))

    def lookup(self, scope: Scope, name: str) -> Scope | None:
        """The scope whose binding of `name` is visible from `scope` (LEGB without builtins), or None."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if current.kind == "class" and not first:
                current = current.parent  # class bodies are not visible from their methods
                continue
            if name in current.global_names:
                current = self.module
            if name in current.bindings or name in current.params:
                return current
            first = False
            current = current.parent
        return None

    def values(self, scope: Scope, name: str) -> tuple[Scope | None, list[Bound]]:
        """Every value `name` may hold in `scope` ([None] when any is unknown)."""
        owner = self.lookup(scope, name)
        if owner is None:
            return None, []
        if name in owner.params:
            return owner, [None, *owner.bindings.get(name, [])]
        return owner, owner.bindings.get(name, [])


# What the builder does inside an expression: a lambda is a scope, `:=` binds a name, and a call of exec, globals
# or vars poisons the module (visit_Call). An expression whose lines hold none of these words is not walked.
_EXPRESSION_WORDS = ("lambda", ":=", "exec", "globals", "vars")
_EXPRESSIONS = frozenset(subclasses_of(ast.expr))


class _Builder(FastNodeVisitor):
    dispatch_only = True  # visit() below only leaves out expressions: the inert nodes stay unvisited
    lines: list[int] | None

    def visit(self, node: ast.AST) -> Any:
        kind = type(node)
        method = self._dispatch.get(kind)
        if method is None:
            method = self._dispatch[kind] = self._method_for(kind)
        lines = self.lines
        if lines is None or kind not in _EXPRESSIONS:
            return method(self, node)
        # the outermost expression of a statement: walked, with all inside it, only when it takes in a word's line
        position = bisect_left(lines, node.lineno)  # type: ignore[attr-defined]
        if position < len(lines) and lines[position] <= (node.end_lineno or node.lineno):  # type: ignore[attr-defined]
            self.lines = None
            method(self, node)
            self.lines = lines
        return None

    def __init__(self, lines: list[int] | None = None, text: str = "",
                 starts: Callable[[], list[int]] | None = None) -> None:
        # the lines where an expression word is written (sorted), None to walk every expression
        self.lines = lines
        # with lines: the text, and where its lines start (asked for at the first `if`), to rule tests out
        self.text = text
        self.starts_of = starts
        self.starts: list[int] | None = None
        self.module = Scope("module", "<module>", ast.Module(body=[], type_ignores=[]), None)
        self.imports = ImportTable()
        self.by_node: dict[int, Scope] = {}
        self.scope = self.module
        self.fallback = 0  # depth of compat branches (except ImportError / version tests)
        # of those, the torch version tests that a rule may decide (script.version_tests), with the branch taken,
        # and how many are anything else (a handler, `hasattr`): an import under one of these is undecidable
        self.gates: list[Gate] = []
        self.opaque = 0
        self.compat_ifs: dict[int, bool] = {}
        # the `if` tests around the statement being visited, and the loops, in the current function
        self.conditions: list[tuple[ast.expr, bool]] = []
        self.loops = 0
        self.contexts: dict[int, tuple[Conditions, bool]] = {}

    def _walks(self, statement: ast.stmt) -> bool:
        """Whether visiting the expressions of `statement` can do anything: its lines take in a line where an
        expression word is written (visit() skips every expression on other lines, so a statement on none of
        them is not walked at all: most assignments and expression statements)."""
        lines = self.lines
        if lines is None:
            return True
        position = bisect_left(lines, statement.lineno)
        return position < len(lines) and lines[position] <= (statement.end_lineno or statement.lineno)

    def _visit_expressions(self, node: ast.Expr | ast.Assert | ast.Raise | ast.Delete) -> None:
        if self._walks(node):
            self.generic_visit(node)

    visit_Expr = visit_Assert = visit_Raise = visit_Delete = _visit_expressions

    def _compat(self, test: ast.expr) -> bool:
        """is_compat_test(test), ruled out first from the text of the lines the test is written on: each name and
        attribute it reads, and a `hasattr` called, is written there as the parser reads it (the lines are
        counted as the parser counts them where `lines` is known: ASCII text, no carriage return), so where
        neither _VERSION_NAME nor `hasattr` / `getattr` is in them the answer is no (most `if`s of a script)."""
        if self.lines is not None and self.starts_of is not None:
            starts = self.starts
            if starts is None:
                starts = self.starts = self.starts_of()
            lineno: int = test.lineno
            last: int = test.end_lineno or lineno
            end = starts[last] if last < len(starts) else len(self.text)
            written = self.text[starts[lineno - 1]:end]
            if _VERSION_NAME.search(written) is None and "hasattr" not in written and "getattr" not in written:
                return False
        return is_compat_test(test)

    def _note(self, value: ast.AST) -> None:
        if self.conditions or self.loops:
            self.contexts[id(value)] = (tuple(self.conditions), self.loops > 0)

    # -- scopes ---------------------------------------------------------------------------------------------
    def _enter(self, kind: ScopeKind, name: str, node: ast.AST) -> Scope:
        scope = Scope(kind, name, node, self.scope)
        self.by_node[id(node)] = scope
        return scope

    def visit_Module(self, node: ast.Module) -> None:
        self.module.node = node
        self.by_node[id(node)] = self.module
        self.generic_visit(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> None:
        for expr in [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]:
            self.visit(expr)
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
            self.scope.bind(name, None)
            outer = self.scope
        scope = self._enter("function", name, node)
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        scope.params = {a.arg for a in every}
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                scope.params.add(extra.arg)
        if self.scope.kind == "class" and every:
            scope.self_name = every[0].arg
        if not isinstance(node, ast.Lambda):
            outer.functions[name] = scope
        saved, self.scope = self.scope, scope
        outer_conditions, outer_loops = self.conditions, self.loops
        self.conditions, self.loops = [], 0  # a body runs when called: the tests around the def do not hold
        if isinstance(node, ast.Lambda):
            self.visit(node.body)
        else:
            for stmt in node.body:
                self.visit(stmt)
        self.scope = saved
        self.conditions, self.loops = outer_conditions, outer_loops

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._visit_function(node, node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._visit_function(node, node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_function(node, "<lambda>")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.bases, *node.decorator_list, *[k.value for k in node.keywords]]:
            self.visit(expr)
        self.scope.bind(node.name, None)
        scope = self._enter("class", node.name, node)
        bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
        # dataclass / attrs / pydantic fields are defaults the constructor overrides, not constants
        scope.fields_are_constants = not node.decorator_list and not (bases & set(_DATA_CLASS_BASES))
        self.scope.functions[node.name] = scope
        saved, self.scope = self.scope, scope
        for stmt in node.body:
            self.visit(stmt)
        self.scope = saved

    # -- bindings -------------------------------------------------------------------------------------------
    def _bind_target(self, target: ast.expr, value: Bound) -> None:
        if isinstance(target, ast.Name):
            self.scope.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values: list[Bound]
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                values = list(value.elts)
            else:
                values = [None] * len(target.elts)
            for element, element_value in zip(target.elts, values, strict=True):
                self._bind_target(element, element_value)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            method = self.scope
            cls = method.enclosing_class
            if cls is not None and method.self_name == target.value.id:
                cls.attrs.setdefault(target.attr, []).append((value, method))

    def visit_Assign(self, node: ast.Assign) -> None:
        self._note(node.value)
        walks = self._walks(node)
        if walks:
            self.visit(node.value)
        for target in node.targets:
            self._bind_target(target, node.value)
            if walks and type(target) is not ast.Name:  # a name holds nothing to visit
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._note(node.value)
            self.visit(node.value)
        value = node.value if (self.scope.kind != "class" or self.scope.fields_are_constants) else None
        self._bind_target(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._bind_target(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind_target(node.target, node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind_target(node.target, None)
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_While(self, node: ast.While) -> None:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
        self.generic_visit(node)

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_comprehension(self, node: ast.comprehension) -> None:
        # Comprehension variables live in their own scope; they never shadow the names we resolve.
        self.visit(node.iter)
        for condition in node.ifs:
            self.visit(condition)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.global_names.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        for name in node.names:
            self.scope.bind(name, None)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.scope.returns.append(node.value)
            self._note(node.value)
            if self._walks(node):
                self.visit(node.value)

    def visit_Import(self, node: ast.Import) -> None:
        self.imports.add(node, self.fallback > 0)
        for alias in node.names:
            self.scope.bind(alias.asname or alias.name.split(".", 1)[0], _IMPORT)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.imports.add(node, self.fallback > 0)
        if self.fallback and not self.opaque:
            self.imports.gates[id(node)] = tuple(self.gates)
        self.imports.scope_ids[id(node)] = id(self.scope)
        for alias in node.names:
            if alias.name == "*":
                # torch's own names cannot rebind the script's constants in a way that matters here; any other
                # module's `*` may rebind any global
                self.module.poisoned |= node.level > 0 or node.module != "torch"
            else:
                self.scope.bind(alias.asname or alias.name, _IMPORT)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in ("exec", "globals", "vars"):
            # nanoGPT's `exec(open('configurator.py').read())` overrides any module-level setting
            self.module.poisoned = True
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        for stmt in node.body:
            self.visit(stmt)
        for handler in node.handlers:
            if handler.name:
                self.scope.bind(handler.name, None)
            compat = is_compat_handler(handler)
            self.fallback += compat
            self.opaque += compat
            for stmt in handler.body:
                self.visit(stmt)
            self.fallback -= compat
            self.opaque -= compat
        for stmt in [*node.orelse, *node.finalbody]:
            self.visit(stmt)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        undo = opaque = 0
        conditions = self.conditions
        depth = len(conditions)
        gates = self.gates
        gated = len(gates)
        while True:  # an elif chain in a loop, not one nested call per branch
            self.visit(node.test)
            compat = self.compat_ifs[id(node)] = self._compat(node.test)
            self.fallback += compat
            undo += compat
            versioned = compat and is_version_test(node.test)
            if versioned:
                gates.append(Gate(node.test, True))
            elif compat:
                self.opaque += 1
                opaque += 1
            conditions.append((node.test, True))
            for stmt in node.body:
                self.visit(stmt)
            conditions[-1] = (node.test, False)
            if versioned:
                gates[-1] = Gate(node.test, False)
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
                continue
            for stmt in node.orelse:
                self.visit(stmt)
            break
        del conditions[depth:]
        del gates[gated:]
        self.fallback -= undo
        self.opaque -= opaque


def build_scopes(tree: ast.Module, text: str | None = None,
                 starts: Callable[[], list[int]] | None = None) -> ScopeTable:
    """The scope table of `tree`; with the text it was parsed from, the expressions whose lines hold no
    _EXPRESSION_WORDS are not walked (most of a file's nodes), and with `starts` too (where the text's lines
    start, core.lines.line_starts: asked for once, at the first `if`), the `if` tests whose lines hold no word
    of a version or feature test are known not to be one without walking them."""
    lines = lines_holding(text, _EXPRESSION_WORDS) if text is not None else None
    builder = _Builder(lines, text or "", starts)
    builder.visit(tree)
    return ScopeTable(builder.module, builder.imports, builder.by_node, builder.compat_ifs, builder.contexts)


def is_import_marker(value: Bound) -> bool:
    return value is _IMPORT


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_FIELDS: dict[type, tuple[str, ...]] = {}


def scoped_nodes(tree: ast.AST, table: ScopeTable) -> Iterator[tuple[ast.AST, Scope]]:
    """Every node of `tree` with the scope (module, function, class) whose statements hold it (depth first,
    each node's children as ast.iter_child_nodes gives them, the last one first)."""
    AST = ast.AST
    fields_of = _FIELDS
    stack: list[tuple[ast.AST, Scope]] = [(tree, table.module)]
    pop, push = stack.pop, stack.append
    while stack:
        node, scope = pop()
        yield node, scope
        kind = type(node)
        inner = scope
        if kind in _SCOPE_NODES:
            inner = table.scope_of(node) or scope
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = kind._fields
        for name in fields:  # ast.iter_child_nodes, without its two generators per node
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            if isinstance(value, AST):
                push((value, inner))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        push((item, inner))
