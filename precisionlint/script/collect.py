"""The main walk: records autocast regions, GradScalers and their protocol events, backward calls, clipping,
optimizer steps, dtype casts, optimizer constructions, BCE calls, TF32 settings and deprecated AMP spellings.

Calls are classified after their arguments are visited (evaluation order), so `scaler.scale(loss).backward()`
is one event and `order` follows what runs first. Calls that need the whole file to classify (`x.step()` is a
scaler step only if `x` is a scaler, which may be created in a method further down) are kept as candidates
and classified in `finish()`.
"""

from __future__ import annotations

import ast
import re

from precisionlint.core.model import Document
from precisionlint.core.records import Record
from precisionlint.script.model import (
    AutocastRegion,
    DeprecatedImport,
    DeprecatedUse,
    Event,
    EventKind,
    GradScalerInfo,
    HalfCast,
    NameUse,
    OptimizerInfo,
    RegionUse,
    ScriptModel,
    Tf32Use,
)
from precisionlint.script.names import (
    AUTOCAST_APIS,
    AUTOGRAD_BACKWARD,
    BCE_FUNCTIONS,
    BCE_MODULES,
    CLIP_APIS,
    DEPRECATED,
    EPS_OPTIMIZERS,
    OTHER_OPTIMIZER_NAMES,
    PARTIAL,
    SCALER_APIS,
    TORCH_OPTIMIZERS,
    canonical,
    dotted,
    other_optimizer,
)
from precisionlint.script.positions import Positions
from precisionlint.script.receivers import frameworks, is_framework_receiver, is_model, is_optimizer
from precisionlint.script.regions import RegionFinder, call_arguments
from precisionlint.script.scopes import Scope, is_compat_handler, is_compat_test
from precisionlint.sources.python_index import FastNodeVisitor, subclasses_of, walk

# Positional parameters, in order, of the GradScaler constructors.
_SCALER_PARAMS = ("device", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")
_LEGACY_SCALER_PARAMS = _SCALER_PARAMS[1:]
# Wrappers that keep float32 master weights of the optimizer they take (apex's and Megatron's FP16_Optimizer,
# MixedPrecisionOptimizer): an optimizer handed to one later (`optimizer = FP16_Optimizer(optimizer)`) is wrapped.
_MASTER_WRAPPER = re.compile(r"(?i)(?:fp16|half|mixed_?precision|master)\w*optimizer$")
# The packages whose optimizers script.names.other_optimizer knows (transformers, bitsandbytes, apex).
_OTHER_OPTIMIZER_PACKAGES = ("transformers.", "bitsandbytes.optim", "apex.optimizers.")
_EPS_POSITION = {"Adagrad": 5}  # Adam, AdamW, NAdam, RAdam, Adamax, SparseAdam, RMSprop: 3

_LEGACY_TF32 = frozenset(
    {
        "torch.backends.cuda.matmul.allow_tf32",
        "torch.backends.cudnn.allow_tf32",
        "torch.set_float32_matmul_precision",
        "torch.get_float32_matmul_precision",
    }
)

# The last part of every qualified name visit_Attribute looks for. canonical() keeps an attribute's last part
# (it renames only `torch.half`, `torch.float` and `torch.double`, none of these), so an attribute whose own
# name is not among them cannot resolve to one: most attributes (`self.encoder`, `x.shape`) are not resolved.
_ATTRIBUTE_ENDS = frozenset({name.rsplit(".", 1)[1] for name in (*DEPRECATED, *_LEGACY_TF32)} | {"fp32_precision"})
# The same for the callees _classify compares with: a method call (`self.encoder(x)`, `x.view(...)`) whose name
# is none of these, nor a class of torch.optim, is no such API.
_CALL_ENDS = frozenset(
    name.rsplit(".", 1)[1]
    for name in (*AUTOCAST_APIS, *SCALER_APIS, *CLIP_APIS, *BCE_FUNCTIONS, AUTOGRAD_BACKWARD, *_LEGACY_TF32, *PARTIAL)
) | TORCH_OPTIMIZERS | OTHER_OPTIMIZER_NAMES | {"AdamW8bit", "PagedAdamW", "PagedAdamW8bit", "PagedAdamW32bit",
                                          "AdamW32bit", "Adam8bit", "Adam32bit", "PagedAdam", "PagedAdam8bit",
                                          "PagedAdam32bit", "Lion8bit", "Lion32bit", "PagedLion", "PagedLion8bit",
                                          "PagedLion32bit", "SGD8bit", "SGD32bit", "RMSprop8bit", "RMSprop32bit",
                                          "Adagrad8bit", "Adagrad32bit", "LAMB8bit", "LAMB32bit", "LARS8bit",
                                          "LARS32bit", "AdEMAMix8bit", "AdEMAMix32bit"}

_STATEMENTS = frozenset(subclasses_of(ast.stmt))


# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers).


class _Candidate(Record):
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


class _ScalerCtor(Record):
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


class _Frame(Record):
    """What changes when the walk enters a function body."""

    __slots__ = ("scope", "active", "loops")
    _fields = __slots__

    def __init__(self, scope: Scope, active: list[RegionUse | None], loops: list[ast.AST]) -> None:
        self.scope = scope
        self.active = active
        self.loops = loops


class _Collector(FastNodeVisitor):
    def __init__(self, model: ScriptModel) -> None:
        self.model = model
        self.table = model.table
        self.resolver = model.resolver
        self.positions = model.positions
        self.frame = _Frame(self.table.module, [], [])
        self.stmt: ast.stmt = ast.Pass()
        self.order = 0
        self.compat = 0  # inside a version test or an `except ImportError:` handler
        self.in_conditional = 0  # inside an arm of `x if c else y` / `a and b`
        self.switched = 0  # inside any part of a version switch: a version-test `if` or a try with a compat handler
        self.branches: list[tuple[int, str, Scope]] = []
        self.call_stack: list[ast.Call] = []
        self.finder = RegionFinder(model)
        self.scaler_ctors: dict[int, _ScalerCtor] = {}
        self.optimizers: dict[int, OptimizerInfo] = {}
        self.cast_calls: dict[int, str] = {}  # id(call) -> dtype of every cast call
        self.candidates: list[_Candidate] = []
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
        self.stmt_autocast: dict[int, RegionUse | None] = {}
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

    # -- statements and scopes ------------------------------------------------------------------------------
    dispatch_only = True  # visit() below adds to the dispatch only for statements

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        method = self._dispatch.get(kind)
        if method is None:
            method = self._dispatch[kind] = self._method_for(kind)
        if kind in _STATEMENTS:
            saved = self.stmt
            self.stmt = node  # type: ignore[assignment]
            active = self.frame.active
            use = active[-1] if active else None
            self.stmt_autocast[id(node)] = use
            if use is not None:
                self.model.autocast_scopes.add(id(self.frame.scope))
            method(self, node)
            self.stmt = saved
        else:
            method(self, node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        entering: list[RegionUse | None] = []
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call):
                    self.func_calls.setdefault(id(decorator.func), decorator)
                else:
                    self.bare_decorators.add(id(decorator))
                self.visit(decorator)
            entering = self._decorator_uses(node)
        for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]:
            self.visit(default)
        scope = self.table.scope_of(node)
        if scope is None:
            return
        saved = self.frame
        self.frame = _Frame(scope, entering, [])
        if isinstance(node, ast.Lambda):
            self.visit(node.body)
        else:
            for stmt in node.body:
                self.visit(stmt)
        self.frame = saved

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function
    visit_Lambda = _visit_function

    def _decorator_uses(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[RegionUse | None]:
        """`@torch.autocast(...)` runs the body under autocast; `@custom_fwd(cast_inputs=...)` with it off."""
        entering: list[RegionUse | None] = []
        body_scope = self.table.scope_of(node) or self.scope
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            name = self.q(decorator.func)
            if name in ("torch.amp.custom_fwd", "torch.cuda.amp.custom_fwd"):
                if any(k.arg == "cast_inputs" for k in decorator.keywords):
                    entering.append(None)
                continue
            contexts = self.finder.contexts(decorator, self.scope)
            regions = [c for c in contexts if isinstance(c, AutocastRegion)]
            for region in regions[:1]:
                use = RegionUse(region, node, "decorator", len(regions) < len(contexts), body_scope)
                region.uses.append(use)
                entering.append(use if region.enabled is not False else None)
        return entering

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(expr)
        scope = self.table.scope_of(node)
        if scope is None:
            return
        saved = self.frame
        self.frame = _Frame(scope, [], [])
        for stmt in node.body:
            self.visit(stmt)
        self.frame = saved

    def _visit_with(self, node: ast.With | ast.AsyncWith) -> None:
        pushed = 0
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
            contexts = self.finder.contexts(item.context_expr, self.scope)
            regions = [c for c in contexts if isinstance(c, AutocastRegion)]
            if not regions:
                continue
            conditional = len(regions) < len(contexts)
            uses = [RegionUse(region, node, "with", conditional, self.scope) for region in regions]
            for use in uses:
                use.region.uses.append(use)
            # Alternatives (`fp16_ctx if a else bf16_ctx`) are one context at run time: the first stands for it.
            self.frame.active.append(uses[0] if uses[0].region.enabled is not False else None)
            pushed += 1
        for stmt in node.body:
            self.visit(stmt)
        for _ in range(pushed):
            self.frame.active.pop()

    visit_With = _visit_with
    visit_AsyncWith = _visit_with

    def _visit_loop(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        if isinstance(node, ast.While):
            self.visit(node.test)
        else:
            self.visit(node.target)
            self.visit(node.iter)
        self.frame.loops.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.frame.loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    visit_For = _visit_loop
    visit_AsyncFor = _visit_loop
    visit_While = _visit_loop

    def visit_If(self, node: ast.If) -> None:
        # An elif chain is walked in this loop (each `elif` a statement of its own, inside the previous arm)
        # rather than one nested call per branch, so 3,000 branches do not recurse 3,000 deep.
        saved_stmt = self.stmt
        undo: list[bool] = []
        while True:
            self.visit(node.test)
            if is_main_guard(node.test) and not node.orelse:
                self.main_guards.add(id(node))
            self.branch_tests[id(node)] = node.test
            compat = self.table.compat_ifs.get(id(node))  # the scope walk has tested it
            if compat is None:
                compat = is_compat_test(node.test)
            self.compat += compat
            self.switched += compat
            undo.append(compat)
            self.branches.append((id(node), "body", self.scope))
            for stmt in node.body:
                self.visit(stmt)
            self.branches.pop()
            self.branches.append((id(node), "orelse", self.scope))
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                node = orelse[0]
                self.stmt = node
                self.stmt_autocast[id(node)] = self.innermost()
                continue
            for stmt in orelse:
                self.visit(stmt)
            break
        for compat in reversed(undo):
            self.branches.pop()
            self.compat -= compat
            self.switched -= compat
        self.stmt = saved_stmt

    def visit_Try(self, node: ast.Try) -> None:
        switched = any(is_compat_handler(h) for h in node.handlers)
        self.switched += switched
        self.branches.append((id(node), "body", self.scope))
        for stmt in node.body:
            self.visit(stmt)
        self.branches.pop()
        for handler in node.handlers:
            compat = is_compat_handler(handler)
            self.compat += compat
            self.branches.append((id(node), "handler", self.scope))
            for stmt in handler.body:
                self.visit(stmt)
            self.branches.pop()
            self.compat -= compat
        self.switched -= switched
        for stmt in [*node.orelse, *node.finalbody]:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.test)
        # `torch.amp.GradScaler(...) if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()`
        compat = is_compat_test(node.test)
        self.compat += compat
        self.in_conditional += 1
        self.visit(node.body)
        self.visit(node.orelse)
        self.in_conditional -= 1
        self.compat -= compat

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self.visit(node.values[0])
        self.in_conditional += 1
        for value in node.values[1:]:
            self.visit(value)
        self.in_conditional -= 1

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)
            if isinstance(target, ast.Attribute):
                self._tf32_write(target, node.value)
        self._bind_constructions(node.targets, node.value)

    def _tf32_write(self, target: ast.expr, value: ast.expr | None) -> None:
        """`torch.backends.cuda.matmul.allow_tf32 = True`, `...fp32_precision = "ieee"`, or (target a call's
        callee) `torch.set_float32_matmul_precision("high")`: one entry of the TF32 state model."""
        from precisionlint.script import tf32

        name = self.q(target)
        if name is None:
            return
        kind = ("legacy", "matmul") if name == tf32.SETTER else tf32.describe(name)
        if kind is None:
            return
        resolved = self.resolver.value(value, self.scope) if value is not None else None
        where: ast.AST = self.func_calls[id(target)] if name == tf32.SETTER else target
        gates = tuple(
            (self.branch_tests[node_id], arm == "body")
            for node_id, arm, scope in self.branches
            if scope is self.scope and node_id in self.branch_tests and arm in ("body", "orelse")
        )
        self.model.tf32_writes.append(
            tf32.Tf32Write(
                api=name,
                family=kind[0],  # type: ignore[arg-type]
                backend=kind[1],
                value=resolved,
                enables=tf32.enables(name, resolved),
                span=self.positions.span(where),
                text=self.positions.segment(where) if name == tf32.SETTER else
                f"{self.positions.segment(target)} = {self.positions.segment(value) if value is not None else '...'}",
                scope=self.scope,
                gates=gates,
            )
        )

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)
            self._bind_constructions([node.target], node.value)

    def _constructs(self, call: ast.Call) -> bool:
        """Whether _bind_constructions has anything to name for this call (most assigned calls build nothing)."""
        if id(call) in self.scaler_ctors:
            return True
        optimizer = self.optimizers.get(id(call))
        if optimizer is not None and optimizer.key is None:
            return True
        link: ast.expr = call
        while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
            if id(link) in self.cast_calls:
                return True
            link = link.func.value
        return False

    def _bind_constructions(self, targets: list[ast.expr], value: ast.expr) -> None:
        """Name the objects built on the right: a GradScaler, an optimizer, a model cast to half."""
        if not any(self._constructs(call) for call, _ in _value_calls(value)):
            return
        refs = [r for r in (self.ref(t) for t in targets) if r is not None]
        if not refs:
            return
        for call, conditional in _value_calls(value):
            ctor = self.scaler_ctors.get(id(call))
            if ctor is not None:
                ctor.targets.extend(refs)
                ctor.conditional |= conditional
                if isinstance(value, ast.IfExp) and call in (value.body, value.orelse):
                    ctor.condition = (value.test, call is value.body)  # `GradScaler() if use_fp16 else None`
            optimizer = self.optimizers.get(id(call))
            if optimizer is not None and optimizer.key is None:
                optimizer.key = refs[0][0]
            # `model = Net().to(device).half()`, `self.model = model.half()`: Module casts return the module,
            # so the assigned name holds the cast object too
            link: ast.expr = call
            while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
                dtype = self.cast_calls.get(id(link))
                if dtype is not None:
                    for key, text in refs:
                        self._add_cast(key, text, dtype, link)
                link = link.func.value

    # -- expressions ----------------------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.q(node) if node.attr in _ATTRIBUTE_ENDS else None
        if name is not None:
            deprecated = DEPRECATED.get(name)
            if deprecated is not None and not self.compat and isinstance(node.ctx, ast.Load):
                self.model.deprecated_uses.append(
                    DeprecatedUse(
                        qualname=name,
                        deprecated=deprecated,
                        node=node,
                        span=self.positions.span(node),
                        call=self.func_calls.get(id(node)),
                        bare_decorator=id(node) in self.bare_decorators,
                        scope=self.scope,
                    )
                )
            self._tf32(node, name)
        self.generic_visit(node)

    def _tf32(self, node: ast.Attribute, name: str) -> None:
        kind = None
        if name in _LEGACY_TF32 and id(node) not in self.func_calls:  # calls are recorded in visit_Call
            kind = "legacy"
        elif (
            isinstance(node.ctx, ast.Store) and name.startswith("torch.backends.") and name.endswith(".fp32_precision")
        ):
            kind = "new"
        if kind is not None:
            self._tf32_use(kind, name, node)

    def _tf32_use(self, kind: str, name: str, node: ast.AST) -> None:
        branches = tuple((node_id, arm) for node_id, arm, _ in self.branches)
        self.model.tf32_uses.append(
            Tf32Use(kind, name, self.positions.span(node), branches, self.switched > 0)  # type: ignore[arg-type]
        )

    def visit_Name(self, node: ast.Name) -> None:
        if not self.deprecated_names or not isinstance(node.ctx, ast.Load):
            return
        owner = self.table.lookup(self.scope, node.id) or self.table.module
        imported = self.deprecated_names.get((id(owner), node.id))
        if imported is not None:
            name = self.q(node)
            if name is not None and name in DEPRECATED:
                imported.uses.setdefault(node.id, []).append(
                    NameUse(node, self.func_calls.get(id(node)), id(node) in self.bare_decorators)
                )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self.func_calls[id(func)] = node
        kind = type(func)
        last = func.attr if kind is ast.Attribute else func.id if kind is ast.Name else None  # type: ignore[attr-defined]
        if last is not None and "scaler" in last.lower() and dotted(func) is not None:
            # timm's NativeScaler, `loss_scaler(loss, optimizer, clip_grad=...)`: a GradScaler behind a wrapper
            self.model.scaler_wrapper_calls.append(self.positions.span(node))
        called = self.resolver.function_for(func, self.scope)
        if called is not None:
            self.model.calls.setdefault(id(self.scope), set()).add(id(called))
        wraps = last is not None and _MASTER_WRAPPER.search(last) is not None
        for argument in [*node.args, *[k.value for k in node.keywords]]:
            if isinstance(argument, (ast.Name, ast.Attribute)):
                self.passed.append((argument, self.scope))
                if wraps:
                    self.wrapped_later.append((argument, self.scope))
        self.call_stack.append(node)
        self.generic_visit(node)
        self.call_stack.pop()
        self._classify(node)

    def _classify(self, node: ast.Call) -> None:
        func = node.func
        # A method's qualified name ends in its own name (see _CALL_ENDS): most are not resolved at all.
        known = type(func) is not ast.Attribute or func.attr in _CALL_ENDS  # type: ignore[attr-defined]
        name = self.q(func) if known else None
        in_conditional = self.in_conditional > 0
        if name in AUTOCAST_APIS:
            self.finder.region(node, name, self.scope, partial=False, in_conditional=in_conditional)
        elif known and (api := self.finder.partial_of_autocast(node, self.scope)) is not None:
            self.finder.region(node, api, self.scope, partial=True, in_conditional=in_conditional)
        elif name in SCALER_APIS:
            self._scaler_ctor(node, name)
        elif name in CLIP_APIS:
            self.event("clip", node)
        elif name in BCE_FUNCTIONS:
            self.event("bce", node)
        elif name == AUTOGRAD_BACKWARD:
            self.event("backward", node, loss=node.args[0] if node.args else None)
        elif name in _LEGACY_TF32:
            self._tf32_use("legacy", name, node)
            if name == "torch.set_float32_matmul_precision":
                argument = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg == "precision"), None
                )
                self._tf32_write(func, argument)
        elif name is not None and name.startswith("torch.optim.") and name[12:] in TORCH_OPTIMIZERS:
            self._optimizer(node, name)
        elif name is not None and name.startswith(_OTHER_OPTIMIZER_PACKAGES) and other_optimizer(name) is not None:
            self._optimizer(node, name)
        elif self.may_call_bce_module and self._calls_bce_module(func):
            self.event("bce", node)
        elif isinstance(func, ast.Attribute):
            self._method(node, func)

    def _method(self, node: ast.Call, func: ast.Attribute) -> None:
        attr, receiver = func.attr, func.value
        if attr == "backward":
            self._backward(node, receiver)
        elif attr == "manual_backward":
            self.event("framework_backward", node, loss=node.args[0] if node.args else None)
        elif attr == "unscale_":
            ref = self.ref(receiver)
            if ref is not None:
                self.scale_keys.add(ref[0])
                self._note_stepped(node)
                self.event("unscale", node, scaler=ref[0], scaler_text=ref[1], optimizer=self._arg_text(node))
        elif attr in ("step", "update", "clip_grad_norm_"):
            self.candidates.append(
                _Candidate(
                    attr,
                    node,
                    receiver,
                    self.scope,
                    self.stmt,
                    self.next_order(),
                    self.innermost(),
                    tuple(self.frame.loops),
                )
            )
            if attr == "step":
                self._note_stepped(node)
        elif attr in ("half", "bfloat16", "float") and not node.args and not node.keywords:
            self._cast(node, receiver, {"half": "float16", "bfloat16": "bfloat16", "float": "float32"}[attr])
        elif attr in ("to", "type"):
            dtype = self._cast_dtype(node)
            if dtype is not None:
                self._cast(node, receiver, dtype)

    def _backward(self, node: ast.Call, receiver: ast.expr) -> None:
        if isinstance(receiver, ast.Call):
            if isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "scale" and receiver.args:
                self._scaled_backward(node, receiver)
                return
            if isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
                return  # an autograd.Function / module overriding backward and delegating
        if is_framework_receiver(self.resolver, receiver, self.scope, node):
            self.event("framework_backward", node, loss=node.args[0] if node.args else None)
            return
        # `loss = scaler.scale(loss)` ... `loss.backward()`: whether `loss` holds the scaled tensor when backward
        # runs depends on the path (flow.py decides); the event carries the scaler it may belong to.
        if isinstance(receiver, ast.Name):
            for value, _owner in self.resolver.bound_values(receiver, self.scope):
                if _is_scale_call(value):
                    assert isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                    ref = self.ref(value.func.value)
                    if ref is not None:
                        self.scale_keys.add(ref[0])
                        self.event(
                            "backward", node, loss=receiver, scaler=ref[0], scaler_text=ref[1], scaled_name=receiver.id
                        )
                        return
        self.event("backward", node, loss=receiver)

    def _scaled_backward(self, node: ast.Call, scale_call: ast.Call) -> None:
        assert isinstance(scale_call.func, ast.Attribute)
        ref = self.ref(scale_call.func.value)
        if ref is None:
            self.event("backward", node, loss=scale_call.args[0])
            return
        self.scale_keys.add(ref[0])
        self.event("scaled_backward", node, scaler=ref[0], scaler_text=ref[1], loss=scale_call.args[0])

    def _note_stepped(self, node: ast.Call) -> None:
        if node.args:
            ref = self.ref(node.args[0])
            if ref is not None:
                self.stepped_keys.add(ref[0])

    def _arg_text(self, node: ast.Call) -> str | None:
        if node.args and not isinstance(node.args[0], ast.Starred):
            return self.positions.segment(node.args[0])
        for keyword in node.keywords:
            if keyword.arg == "optimizer":
                return self.positions.segment(keyword.value)
        return None

    def _calls_bce_module(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Call):
            return self.q(func.func) in BCE_MODULES
        for value, owner in self.resolver.bound_values(func, self.scope):
            if isinstance(value, ast.Call) and self.q(value.func, owner) in BCE_MODULES:
                return True
        return False

    # -- constructions --------------------------------------------------------------------------------------
    def _scaler_ctor(self, node: ast.Call, api: str) -> None:
        order = (
            _SCALER_PARAMS
            if api in ("torch.amp.GradScaler", "torch.distributed.fsdp.ShardedGradScaler")
            else (_LEGACY_SCALER_PARAMS)
        )
        params, unpacked = call_arguments(node, order)
        enabled_expr = params.get("enabled")
        enabled: bool | None
        if enabled_expr is None:
            enabled = None if unpacked else True
        else:
            enabled = self.resolver.truth(enabled_expr, self.scope)
        # `if __name__ == "__main__":` is how a script runs at all, not a condition on the scaler
        conditional = self.in_conditional > 0 or any(
            scope is self.scope and arm in ("body", "orelse") and node_id not in self.main_guards
            for node_id, arm, scope in self.branches
        )
        ctor = _ScalerCtor(api, node, self.scope, enabled, enabled_expr, conditional)
        arms = [(node_id, arm) for node_id, arm, scope in self.branches if scope is self.scope]
        if arms and arms[-1][0] in self.branch_tests and arms[-1][1] in ("body", "orelse"):
            ctor.condition = (self.branch_tests[arms[-1][0]], arms[-1][1] == "body")  # `if use_fp16: scaler = ...`
        self.scaler_ctors[id(node)] = ctor
        self.model.scaler_constructions.append(self.positions.span(node))

    def _optimizer(self, node: ast.Call, api: str) -> None:
        cls = api.rsplit(".", 1)[1]
        other = other_optimizer(api) if not api.startswith("torch.optim.") else None
        if other is not None and any(k.arg in other.master_keywords or k.arg is None for k in node.keywords):
            return  # `FusedAdam(..., master_weights=True)`: float32 master weights of its own (or hidden in **kw)
        default_eps = EPS_OPTIMIZERS.get(cls) if other is None else other.eps
        params, _ = call_arguments(node, ("params",))
        param_expr = params.get("params")
        eps_expr = params.get("eps")
        if eps_expr is None and (cls in EPS_OPTIMIZERS if other is None else other.eps is not None):
            position = _EPS_POSITION.get(cls, 3) if other is None else 3
            if len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
                eps_expr = node.args[position]
        eps: float | None = None
        if eps_expr is not None:
            value = self.resolver.value(eps_expr, self.scope)
            try:  # an integer too large for a float (1 followed by 400 zeros) is no eps a rule can judge
                eps = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            except OverflowError:
                eps = None
        elif not any(k.arg is None for k in node.keywords):
            eps = default_eps
        fused_expr = params.get("fused")
        parent = self.call_stack[-1] if self.call_stack else None
        wrapped = (
            parent is not None
            and (node in parent.args or any(k.value is node for k in parent.keywords))
            and self.q(parent.func) not in PARTIAL
        )
        info = OptimizerInfo(
            cls=cls,
            api=api,
            key=None,
            param_keys=frozenset(self._param_keys(param_expr, self.scope, 0))
            if param_expr is not None
            else frozenset(),
            eps=eps,
            eps_explicit=eps_expr is not None,
            eps_span=self.positions.span(eps_expr) if eps_expr is not None else None,
            fused=self.resolver.truth(fused_expr, self.scope) if fused_expr is not None else None,
            wrapped=wrapped,
            span=self.positions.span(node),
            scope=self.scope,
            node=node,
            float32_state=other is not None and other.float32_state,
        )
        self.optimizers[id(node)] = info
        self.model.optimizers.append(info)

    def _param_keys(self, expr: ast.expr, scope: Scope, depth: int,
                    memo: dict[tuple[int, str, int], set[str]] | None = None) -> set[str]:
        """Keys of the modules whose parameters an optimizer receives, following local variables
        (nanoGPT: `param_dict = {pn: p for pn, p in self.named_parameters()}` ... `optim_groups`).

        A name's values are the same wherever it is read in one scope, so each (scope, name, depth) is followed
        once per optimizer (`memo`): without it, a module that rebinds its names to each other (`m2 = model`,
        `model = m2`, repeated) was followed through every value of every value, three levels deep, which
        grew as the cube of the file (a 36 kB file took 8 s)."""
        memo = {} if memo is None else memo
        keys: set[str] = set()
        for node in walk(expr):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ("parameters", "named_parameters"):
                    keys.update(key for key, _ in self.keys_of(node.func.value, scope))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and depth < 3:
                key = (id(scope), node.id, depth)
                found = memo.get(key)
                if found is None:
                    found = memo[key] = set()  # filled below; depth grows, so the key cannot recur meanwhile
                    for value, owner in self.resolver.bound_values(node, scope):
                        if value is not None:
                            found |= self._param_keys(value, owner, depth + 1, memo)
                keys |= found
        return keys

    def _cast_dtype(self, node: ast.Call) -> str | None:
        """The floating dtype of `.to(...)` / `.type(...)`, when one is given and resolvable."""
        candidates = [a for a in node.args if not isinstance(a, ast.Starred)]
        candidates += [k.value for k in node.keywords if k.arg in ("dtype", "dst_type")]
        for expr in candidates:
            dtype = self.resolver.dtype(expr, self.scope)
            if dtype in ("float16", "bfloat16", "float32"):
                return dtype
        return None

    def _cast(self, node: ast.Call, receiver: ast.expr, dtype: str) -> None:
        base = receiver
        # `model.cuda().half()`, `model.to(device).half()`: the object cast is the chain's root
        while (
            isinstance(base, ast.Call)
            and isinstance(base.func, ast.Attribute)
            and base.func.attr
            in (
                "cuda",
                "cpu",
                "to",
                "eval",
                "train",
                "requires_grad_",
                "half",
                "bfloat16",
                "float",
            )
        ):
            base = base.func.value
        self.cast_calls[id(node)] = dtype
        for key, text in self.keys_of(base):
            self._add_cast(key, text, dtype, node)

    def _add_cast(self, key: str, text: str, dtype: str, node: ast.Call) -> None:
        self.model.casts.append(HalfCast(key, text, dtype, self.positions.span(node), self.scope))

    # -- after the walk -------------------------------------------------------------------------------------
    def prepare_imports(self) -> None:
        """Deprecated `from torch.cuda.amp import ...` statements, known before the walk records their uses."""
        for node, fallback in self.table.imports.from_imports:
            if fallback or not node.module:
                continue
            names = [(alias, DEPRECATED.get(canonical(f"{node.module}.{alias.name}"))) for alias in node.names]
            if not any(d is not None for _, d in names):
                continue
            record = DeprecatedImport(node, node.module, names, self.positions.span(node))
            self.model.deprecated_imports.append(record)
            scope_id = self.table.imports.scope_ids.get(id(node), id(self.table.module))
            for alias, deprecated in names:
                if deprecated is not None:
                    self.deprecated_names[(scope_id, alias.asname or alias.name)] = record

    def finish(self) -> None:
        scalers = self.model.scalers
        for ctor in self.scaler_ctors.values():
            for key, text in ctor.targets or []:
                info = scalers.get(key) or GradScalerInfo(key, text)
                scalers[key] = info
                first = info.api is None
                info.api = info.api or ctor.api
                info.span = info.span or self.positions.span(ctor.node)
                info.enabled = ctor.enabled if first else (info.enabled if info.enabled == ctor.enabled else None)
                info.enabled_expr = info.enabled_expr or ctor.enabled_expr
                info.conditional = info.conditional or ctor.conditional or not first
                info.condition = ctor.condition if first else None
        known = set(scalers) | self.scale_keys
        optimizer_keys = {o.key for o in self.model.optimizers if o.key is not None}
        for candidate in self.candidates:
            self._classify_candidate(candidate, known, optimizer_keys)
        self.model.events.sort(key=lambda e: e.order)
        for event in self.model.events:
            if event.scaler is None:
                continue
            owner = scalers.get(event.scaler)
            if owner is None:
                owner = scalers[event.scaler] = GradScalerInfo(event.scaler, event.scaler_text or event.scaler)
            owner.events.append(event)
        passed = {self.resolver.ref_key(argument, scope) for argument, scope in self.passed} if scalers else set()
        if self.wrapped_later:
            wrapped = {self.resolver.ref_key(argument, scope) for argument, scope in self.wrapped_later}
            for optimizer in self.model.optimizers:
                if optimizer.key is not None and optimizer.key in wrapped:
                    optimizer.wrapped = True
        for info in scalers.values():
            self._locate(info)
            info.escapes = info.key in passed
        self.model.frameworks = frameworks(self.table.imports)

    def _classify_candidate(self, candidate: _Candidate, scalers: set[str], optimizers: set[str]) -> None:
        ref = self.ref(candidate.receiver, candidate.scope)
        key = ref[0] if ref else None
        saved_frame, saved_stmt = self.frame, self.stmt
        self.frame = _Frame(candidate.scope, [candidate.autocast] if candidate.autocast else [], list(candidate.loops))
        self.stmt = candidate.stmt
        try:
            node, order = candidate.node, candidate.order
            if candidate.method in ("step", "update") and key in scalers:
                assert ref is not None
                if candidate.method == "step" and node.args:
                    self.event(
                        "scaler_step", node, order, scaler=key, scaler_text=ref[1], optimizer=self._arg_text(node)
                    )
                elif candidate.method == "update":
                    self.event("scaler_update", node, order, scaler=key, scaler_text=ref[1])
            elif (
                candidate.method == "step"
                and len(node.args) <= 1
                and is_optimizer(candidate.receiver, key, optimizers | self.stepped_keys)
            ):
                self.event("optimizer_step", node, order, optimizer=ref[1] if ref else None)
            elif candidate.method == "clip_grad_norm_" and is_model(self.resolver, candidate.receiver, candidate.scope):
                self.event("clip", node, order)
        finally:
            self.frame, self.stmt = saved_frame, saved_stmt

    def _locate(self, info: GradScalerInfo) -> None:
        if ":" not in info.key:  # "<Class>.self.<attr>"
            info.owner_class = _find_scope(self.table.module, info.key.split(".self", 1)[0])
            return
        owner_name = info.key.split(":", 1)[0]
        if owner_name != "<module>":
            info.local_to = _find_scope(self.table.module, owner_name)


def is_main_guard(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides
    )


def _find_scope(module: Scope, qualname: str) -> Scope | None:
    current: Scope | None = module
    for part in qualname.split("."):
        if current is None:
            return None
        current = current.functions.get(part)
    return current


def _is_scale_call(value: ast.expr | None) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "scale"
        and len(value.args) == 1
    )


def _value_calls(value: ast.expr, conditional: bool = False) -> list[tuple[ast.Call, bool]]:
    """The calls whose result may be the assigned value: `X(...)`, either arm of `a if c else b`, `a or b`."""
    if isinstance(value, ast.Call):
        return [(value, conditional)]
    if isinstance(value, ast.IfExp):
        return _value_calls(value.body, True) + _value_calls(value.orelse, True)
    if isinstance(value, ast.BoolOp):
        found: list[tuple[ast.Call, bool]] = []
        for operand in value.values:
            found += _value_calls(operand, True)
        return found
    return []


def collect(document: Document, tree: ast.Module) -> ScriptModel:
    from precisionlint.values.settings import shared_scopes

    table, resolver = shared_scopes(document, tree)
    model = ScriptModel(document=document, positions=Positions(document), table=table, resolver=resolver)
    collector = _Collector(model)
    collector.prepare_imports()
    if not collector.deprecated_names:  # visit_Name has nothing to look for: skip every name
        collector._inert = collector._inert | {ast.Name}
    collector.visit(tree)
    collector.finish()
    model.statement_autocast = collector.stmt_autocast
    return model
