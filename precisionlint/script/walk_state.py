"""The collector's state: where the walk is (the scope, the autocast uses active there, the loops and branches
around the statement) and what it has met so far, with the look-ups every part of the collector shares.

The collector (collect.py) is one visitor built in layers, each a module with one job: this state, the objects
the script constructs (constructions.py), what each call is (calls.py), and the walk over statements and scopes
with what is decided after it (collect.py).
"""

from __future__ import annotations

import ast

from precisionlint.core.records import Record
from precisionlint.script.model import DeprecatedImport, Event, EventKind, OptimizerInfo, RegionUse, ScriptModel
from precisionlint.script.names import BCE_MODULES
from precisionlint.script.regions import RegionFinder
from precisionlint.script.scopes import Scope
from precisionlint.script.version_tests import Gate
from precisionlint.sources.python_index import FastNodeVisitor

# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers).


class PendingCall(Record):
    """A call whose kind depends on the whole file (`x.step()`, `x.update()`, `x.clip_grad_norm_()`)."""

    __slots__ = ("method", "node", "receiver", "scope", "stmt", "order", "autocast", "loops")
    _fields = __slots__

    def __init__(self, method: str, node: ast.Call, receiver: ast.expr, scope: Scope, stmt: ast.stmt, order: int,
                 autocast: RegionUse | None, loops: tuple[ast.AST, ...]) -> None:
        self.method = method
        self.node = node
        self.receiver = receiver
        self.scope = scope
        self.stmt = stmt
        self.order = order
        self.autocast = autocast
        self.loops = loops


class ScalerConstruction(Record):
    """A GradScaler constructor call, and the names it is assigned to."""

    __slots__ = ("api", "node", "scope", "enabled", "enabled_expr", "conditional", "targets", "condition")
    _fields = __slots__

    def __init__(
        self,
        api: str,
        node: ast.Call,
        scope: Scope,
        enabled: bool | None,
        enabled_expr: ast.expr | None,
        conditional: bool,
        targets: list[tuple[str, str]] | None = None,
        condition: tuple[ast.expr, bool] | None = None,
    ) -> None:
        self.api = api
        self.node = node
        self.scope = scope
        self.enabled = enabled
        self.enabled_expr = enabled_expr
        self.conditional = conditional
        self.targets: list[tuple[str, str]] = [] if targets is None else targets
        self.condition = condition  # the test it is built under, and in which arm


class Frame(Record):
    """What changes when the walk enters a function body."""

    __slots__ = ("scope", "active", "loops")
    _fields = __slots__

    def __init__(self, scope: Scope, active: list[RegionUse | None], loops: list[ast.AST]) -> None:
        self.scope = scope
        self.active = active
        self.loops = loops


class WalkState(FastNodeVisitor):
    """The state of one walk over a file and the look-ups shared by the layers of the collector above it."""

    def __init__(self, model: ScriptModel) -> None:
        self.model = model
        self.table = model.table
        self.resolver = model.resolver
        self.positions = model.positions
        self.frame = Frame(self.table.module, [], [])
        self.stmt: ast.stmt = ast.Pass()
        self.order = 0
        self.compat = 0  # inside a version test or an `except ImportError:` handler
        # of those, the torch version tests a rule may decide (script.version_tests), with the branch, and how
        # many are anything else (a handler, `hasattr`, a flag): under one of these, a use is not recorded
        self.gates: list[Gate] = []
        self.opaque = 0
        self.in_conditional = 0  # inside an arm of `x if c else y` / `a and b`
        self.switched = 0  # inside any part of a version switch: a version-test `if` or a try with a compat handler
        self.branches: list[tuple[int, str, Scope]] = []
        self.call_stack: list[ast.Call] = []
        self.finder = RegionFinder(model)
        self.scaler_ctors: dict[int, ScalerConstruction] = {}
        self.optimizers: dict[int, OptimizerInfo] = {}
        self.cast_calls: dict[int, str] = {}  # id(call) -> dtype of every cast call
        self.candidates: list[PendingCall] = []
        self.scale_keys: set[str] = set()  # receivers of .scale(...) feeding a backward, of .unscale_()
        self.stepped_keys: set[str] = set()  # arguments of scaler.step(x) / unscale_(x)
        # variables passed as an argument to some call, with the scope of the call: their keys are needed only
        # when the file has a scaler (see finish)
        self.passed: list[tuple[ast.expr, Scope]] = []
        # names handed to a wrapper that keeps float32 master weights (`optimizer = FP16_Optimizer(optimizer)`)
        self.wrapped_later: list[tuple[ast.expr, Scope]] = []
        self.func_calls: dict[int, ast.Call] = {}  # id(call.func) -> call
        self.bare_decorators: set[int] = set()
        self.deprecated_names: dict[tuple[int, str], DeprecatedImport] = {}  # (id(scope), local name) -> import
        self.stmt_autocast: dict[int, RegionUse | None] = {}  # id(statement) -> the autocast use it runs under, if any
        self.main_guards: set[int] = set()  # id of each `if __name__ == "__main__":` statement
        self.branch_tests: dict[int, ast.expr] = {}  # id(if statement) -> its test
        # Only a file that names BCELoss can resolve a callee to it (ASCII identifiers are written as they
        # resolve; imports and attributes are where qualified names come from): most files skip the look-up.
        text = model.document.text
        self.may_call_bce_module = not text.isascii() or any(m.rsplit(".", 1)[1] in text for m in BCE_MODULES)

    # -- helpers --------------------------------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.frame.scope

    def q(self, expr: ast.expr, scope: Scope | None = None) -> str | None:
        return self.resolver.qualname(expr, scope or self.scope)

    def innermost(self) -> RegionUse | None:
        return self.frame.active[-1] if self.frame.active else None

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def ref(self, expr: ast.expr, scope: Scope | None = None) -> tuple[str, str] | None:
        """(key, text as written) of a variable or attribute chain; `self.x` is keyed by its class."""
        key = self.resolver.ref_key(expr, scope or self.scope)
        return (key, self.positions.segment(expr)) if key is not None else None

    def keys_of(self, expr: ast.expr, scope: Scope | None = None) -> list[tuple[str, str]]:
        """ref() plus the `self.attr` the same object is stored under in this method (`self.model = model`)."""
        scope = scope or self.scope
        found = self.ref(expr, scope)
        if found is None:
            return []
        keys = [found]
        cls = scope.enclosing_class
        if isinstance(expr, ast.Name) and cls is not None:
            for attr, values in cls.attrs.items():
                if any(isinstance(v, ast.Name) and v.id == expr.id and owner is scope for v, owner in values):
                    keys.append((f"{cls.qualname}.self.{attr}", found[1]))
        return keys

    def event(self, kind: EventKind, node: ast.Call, order: int | None = None, **fields: object) -> Event:
        made = Event(
            kind=kind,
            node=node,
            span=self.positions.span(node),
            scope=self.scope,
            stmt=self.stmt,
            order=order if order is not None else self.next_order(),
            autocast=self.innermost(),
            loops=tuple(self.frame.loops),
            **fields,  # type: ignore[arg-type]
        )
        self.model.events.append(made)
        return made

