"""The main walk: records autocast regions, GradScalers and their protocol events, backward calls, clipping,
optimizer steps, dtype casts, optimizer constructions, BCE calls, TF32 settings and deprecated AMP spellings.

One visitor in layers, each a module with one job: walk_state.py (where the walk is, the shared look-ups),
constructions.py (scalers, optimizers and casts, and the names they are bound to), calls.py (what each call is),
and here the statements and scopes, and what is decided once the whole file is read.

Calls are classified after their arguments are visited (evaluation order), so `scaler.scale(loss).backward()`
is one event and `order` follows what runs first. Calls that need the whole file to classify (`x.step()` is a
scaler step only if `x` is a scaler, which may be created in a method further down) are kept as pending calls
and classified in `finish()`.
"""

from __future__ import annotations

import ast

from precisionlint.core.model import Document
from precisionlint.script.calls import CallRecorder
from precisionlint.script.model import AutocastRegion, DeprecatedImport, GradScalerInfo, RegionUse, ScriptModel
from precisionlint.script.names import DEPRECATED, canonical
from precisionlint.script.positions import Positions
from precisionlint.script.receivers import frameworks, is_model, is_optimizer
from precisionlint.script.scopes import Scope, is_compat_handler, is_compat_test
from precisionlint.script.version_tests import Gate, is_version_test
from precisionlint.script.walk_state import Frame, PendingCall
from precisionlint.sources.python_index import subclasses_of

_STATEMENTS = frozenset(subclasses_of(ast.stmt))


class _Collector(CallRecorder):
    """The walk over statements and scopes (the layers below record what it meets), then finish()."""

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
            if active:
                use = active[-1]
                # only statements under autocast are entered (every reader asks with .get: absent is None)
                if use is not None:
                    self.stmt_autocast[id(node)] = use
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
        self.frame = Frame(scope, entering, [])
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
        self.frame = Frame(scope, [], [])
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
            if type(node.target) is not ast.Name:  # a name bound is nothing visit_Name looks at
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
        gates = self.gates
        gated = len(gates)
        opaque = 0
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
            versioned = compat and is_version_test(node.test)
            if versioned:
                gates.append(Gate(node.test, True))
            elif compat:
                self.opaque += 1
                opaque += 1
            self.branches.append((id(node), "body", self.scope))
            for stmt in node.body:
                self.visit(stmt)
            self.branches.pop()
            if versioned:
                gates[-1] = Gate(node.test, False)
            self.branches.append((id(node), "orelse", self.scope))
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                node = orelse[0]
                self.stmt = node
                use = self.innermost()
                if use is not None:
                    self.stmt_autocast[id(node)] = use
                continue
            for stmt in orelse:
                self.visit(stmt)
            break
        for compat in reversed(undo):
            self.branches.pop()
            self.compat -= compat
            self.switched -= compat
        del gates[gated:]
        self.opaque -= opaque
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
            self.opaque += compat
            self.branches.append((id(node), "handler", self.scope))
            for stmt in handler.body:
                self.visit(stmt)
            self.branches.pop()
            self.compat -= compat
            self.opaque -= compat
        self.switched -= switched
        for stmt in [*node.orelse, *node.finalbody]:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.test)
        # `torch.amp.GradScaler(...) if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()`
        compat = is_compat_test(node.test)
        versioned = compat and is_version_test(node.test)
        opaque = compat and not versioned
        self.compat += compat
        self.opaque += opaque
        self.in_conditional += 1
        for value, branch in ((node.body, True), (node.orelse, False)):
            if versioned:
                self.gates.append(Gate(node.test, branch))
            self.visit(value)
            if versioned:
                self.gates.pop()
        self.in_conditional -= 1
        self.compat -= compat
        self.opaque -= opaque

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self.visit(node.values[0])
        self.in_conditional += 1
        for value in node.values[1:]:
            self.visit(value)
        self.in_conditional -= 1

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            kind = type(target)
            if kind is ast.Name:
                continue  # visit_Name looks only at names read, not at names bound
            self.visit(target)
            if kind is ast.Attribute:
                self.tf32_write(target, node.value)
        self.bind_constructions(node.targets, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            if type(node.target) is not ast.Name:  # a name bound is nothing visit_Name looks at
                self.visit(node.target)
            self.bind_constructions([node.target], node.value)

    # -- after the walk -------------------------------------------------------------------------------------
    def prepare_imports(self) -> None:
        """Deprecated `from torch.cuda.amp import ...` statements, known before the walk records their uses."""
        gated = self.table.imports.gates
        for node, fallback in self.table.imports.from_imports:
            gates = gated.get(id(node), ()) if fallback else ()
            if fallback and not gates or not node.module:
                continue
            names = [(alias, DEPRECATED.get(canonical(f"{node.module}.{alias.name}"))) for alias in node.names]
            if not any(d is not None for _, d in names):
                continue
            record = DeprecatedImport(node, node.module, names, self.positions.span(node), gates=gates)  # type: ignore[arg-type]
            self.model.deprecated_imports.append(record)
            if gates:
                continue  # a fallback binding: its uses are not followed (the primary spelling is what they name)
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
        passed: set[str | None] = set()
        if scalers:
            # a variable's key ends in its own last name (Resolver.ref_key): only the arguments named like a scaler
            # can be one (most arguments of most calls are not: their keys were a tenth of the collector)
            ends = {key.replace(":", ".").rsplit(".", 1)[-1] for key in scalers}
            passed = {self.resolver.ref_key(argument, scope) for argument, scope in self.passed
                      if (argument.id if type(argument) is ast.Name else getattr(argument, "attr", None)) in ends}
        if self.wrapped_later:
            wrapped = {self.resolver.ref_key(argument, scope) for argument, scope in self.wrapped_later}
            for optimizer in self.model.optimizers:
                if optimizer.key is not None and optimizer.key in wrapped:
                    optimizer.wrapped = True
        for info in scalers.values():
            self._locate(info)
            info.escapes = info.key in passed
        self.model.frameworks = frameworks(self.table.imports)

    def _classify_candidate(self, candidate: PendingCall, scalers: set[str], optimizers: set[str]) -> None:
        ref = self.ref(candidate.receiver, candidate.scope)
        key = ref[0] if ref else None
        saved_frame, saved_stmt = self.frame, self.stmt
        self.frame = Frame(candidate.scope, [candidate.autocast] if candidate.autocast else [], list(candidate.loops))
        self.stmt = candidate.stmt
        try:
            node, order = candidate.node, candidate.order
            if candidate.method in ("step", "update") and key in scalers:
                assert ref is not None
                if candidate.method == "step" and node.args:
                    self.event(
                        "scaler_step", node, order, scaler=key, scaler_text=ref[1], optimizer=self.optimizer_text(node)
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


def collect(document: Document, tree: ast.Module) -> ScriptModel:
    from precisionlint.values.settings import shared_scopes

    table, resolver = shared_scopes(document, tree)
    model = ScriptModel(document=document, positions=Positions(document), table=table, resolver=resolver)
    collector = _Collector(model)
    collector.prepare_imports()
    if not collector.deprecated_names:  # visit_Name has nothing to look for: skip every name
        collector._inert = collector._inert | {ast.Name}
    else:  # ... but the deprecated imports' names (a third of the nodes it would visit otherwise)
        collector._names = frozenset(name for _, name in collector.deprecated_names)
    collector.visit(tree)
    collector.finish()
    model.statement_autocast = collector.stmt_autocast
    return model
