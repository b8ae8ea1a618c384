"""Path-sensitive ordering inside each function: a small abstract interpreter over statements.

A *state* is the set of facts true on one path; the interpreter carries the set of states of every path that
reaches a statement. `if`/`else` arms start from the states before the `if` and their results are joined, so
a call in one arm neither excuses nor incriminates the other. Loops run their body until the states stop
changing (a fact from the end of one iteration reaches the start of the next). `return`, `raise`, `break` and
`continue` end a path where Python ends it.

Facts:
    ("scaled", scaler)     scaler.scale(loss).backward() ran; gradients are multiplied by the scale
    ("unscaled", scaler)   scaler.unscale_(optimizer) ran since then
    ("taint", name, i)     `name` holds a value computed under autocast region i (reaching definitions)
    ("scaled_var", name, s) `name` holds `s.scale(loss)`, so `name.backward()` is a scaled backward
    ("cond", test, bool)   the `if` test `test` was taken this way, and nothing it reads was reassigned since

Results are written on the events: clip events get `pending_unscale`, optimizer steps `pending_step`,
backward calls `reached` (the autocast regions whose outputs their loss is computed from).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from precisionlint.script.model import Event, RegionUse, ScriptModel
from precisionlint.script.names import dotted
from precisionlint.script.scopes import Scope

Fact = tuple
State = frozenset
_MAX_STATES = 64
_MAX_LOOP_PASSES = 6


@dataclass
class _Loop:
    breaks: set[State] = field(default_factory=set)
    continues: set[State] = field(default_factory=set)


class _Analysis:
    """Shared by every function of the file."""

    def __init__(self, model: ScriptModel) -> None:
        self.model = model
        self.resolver = model.resolver
        self.regions = model.all_regions
        self.region_index = {id(r): i for i, r in enumerate(self.regions)}
        self.events: dict[int, list[Event]] = {}
        for event in model.events:
            self.events.setdefault(id(event.stmt), []).append(event)
        self.returns: dict[int, frozenset[int]] = {}  # id(function scope) -> regions its results come from
        self.scopes_with_events = {id(e.scope) for e in model.events}
        self.scaler_enabled_names: dict[str, tuple[set[str], str | None]] = {}
        for key, info in model.scalers.items():
            expr = info.enabled_expr
            names = (
                {d for d in (dotted(n) for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute))) if d}
                if expr
                else set()
            )
            self.scaler_enabled_names[key] = (names, ast.dump(expr) if expr is not None else None)


class _Function:
    def __init__(self, analysis: _Analysis, scope: Scope, body: list[ast.stmt]) -> None:
        self.analysis = analysis
        self.model = analysis.model
        self.scope = scope
        self.body = body
        self.loops: list[_Loop] = []
        self.cond_names: dict[str, set[str]] = {}
        self.returned: set[int] = set()
        self.static: dict[int, tuple[frozenset[str], frozenset[int]]] = {}
        called = self.model.calls.get(id(scope), set())
        self.track_taint = id(scope) in self.model.autocast_scopes or any(f in analysis.returns for f in called)
        self.tracked_tests: set[str] = set()
        self.relevant: frozenset[str] = frozenset()
        self.scaled_names = {e.scaled_name for e in self.model.events if e.scope is scope and e.scaled_name is not None}

    def worth_running(self) -> bool:
        return self.track_taint or id(self.scope) in self.analysis.scopes_with_events

    def prepare(self) -> None:
        """One pass over the statements (not the expressions) of the body: which `if` tests to correlate, and
        which names to track taint for.

        Only tests that occur twice can correlate, and only around the calls we order; tracking the others
        would multiply the states for nothing. Taint is tracked only for names whose value can flow into a
        backward call or a return value (a backward slice over the assignments)."""
        event_statements = {id(e.stmt) for e in self.model.events if e.scope is self.scope}
        tests: dict[str, int] = {}
        feeds: dict[str, set[str]] = {}
        wanted: set[str] = set()

        def scan(statements: list[ast.stmt]) -> bool:
            found = False
            for node in statements:
                # statements under autocast matter too: their outputs are what taint tracks
                here = id(node) in event_statements or (
                    self.track_taint and self.model.statement_autocast.get(id(node)) is not None
                )
                if isinstance(node, ast.If):
                    inner = scan(node.body) | scan(node.orelse)
                    test, _ = _strip_not(node.test)
                    if (inner or here) and _trackable(test):
                        key = ast.dump(test)
                        tests[key] = tests.get(key, 0) + 1
                    here |= inner
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                    here |= scan(node.body) | scan(node.orelse)
                    if self.track_taint and not isinstance(node, ast.While):
                        _feed(feeds, [node.target], node.iter)
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    here |= scan(node.body)
                elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                    handlers = [stmt for handler in node.handlers for stmt in handler.body]  # type: ignore[attr-defined]
                    here |= scan(node.body) | scan(handlers) | scan(node.orelse) | scan(node.finalbody)  # type: ignore[attr-defined]
                elif isinstance(node, ast.Match):
                    here |= scan([stmt for case in node.cases for stmt in case.body])
                elif self.track_taint:
                    if isinstance(node, ast.Assign):
                        _feed(feeds, node.targets, node.value)
                    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                        _feed(feeds, [node.target], node.value)
                    elif isinstance(node, ast.Return) and node.value is not None:
                        wanted.update(_read_names(node.value))
                found |= here
            return found

        scan(self.body)
        self.tracked_tests = {key for key, count in tests.items() if count > 1}
        if not self.track_taint:
            return
        for event in self.model.events:
            if event.scope is self.scope and event.loss is not None:
                wanted.update(_read_names(event.loss))
        pending = list(wanted)
        while pending:
            for source in feeds.get(pending.pop(), ()):
                if source not in wanted:
                    wanted.add(source)
                    pending.append(source)
        self.relevant = frozenset(wanted)

    # -- driver ---------------------------------------------------------------------------------------------
    def run(self) -> frozenset[int]:
        self.prepare()
        self.block(self.body, {frozenset()})
        return frozenset(self.returned)

    def block(self, statements: Iterable[ast.stmt], states: set[State]) -> set[State]:
        for statement in statements:
            if not states:
                break  # unreachable after return / raise / break / continue
            states = self._limit(self.statement(statement, states))
        return states

    def _limit(self, states: set[State]) -> set[State]:
        """Keep the state count bounded by dropping whole paths, the fewest facts first kept: a dropped path can
        only hide a finding. (Forgetting facts instead would merge paths and could invent one.)"""
        if len(states) <= _MAX_STATES:
            return states
        return set(sorted(states, key=lambda s: (len(s), sorted(map(repr, s))))[:_MAX_STATES])

    def statement(self, node: ast.stmt, states: set[State]) -> set[State]:
        states = self.apply_events(node, states)
        if isinstance(node, ast.If):
            return self._if(node, states)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return self._loop(node, states)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return self.block(node.body, states)
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            return self._try(node, states)  # type: ignore[arg-type]
        if isinstance(node, ast.Match):
            result: set[State] = set()
            exhaustive = False
            for case in node.cases:
                result |= self.block(case.body, states)
                exhaustive |= (
                    isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None and case.guard is None
                )
            return result if exhaustive else result | states
        if isinstance(node, ast.Return):
            if node.value is not None:
                for state in states:
                    self.returned |= self.taint_of(node.value, node, state)
            return set()
        if isinstance(node, ast.Raise):
            return set()
        if isinstance(node, ast.Break):
            if self.loops:
                self.loops[-1].breaks |= states
            return set()
        if isinstance(node, ast.Continue):
            if self.loops:
                self.loops[-1].continues |= states
            return set()
        if isinstance(node, ast.Assign):
            return {self.assign(s, node.targets, node.value, node, False) for s in states}
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            return {self.assign(s, [node.target], node.value, node, False) for s in states}
        if isinstance(node, ast.AugAssign):
            return {self.assign(s, [node.target], node.value, node, True) for s in states}
        return states

    # -- compound statements --------------------------------------------------------------------------------
    def _if(self, node: ast.If, states: set[State]) -> set[State]:
        test, negated = _strip_not(node.test)
        key = ast.dump(test) if _trackable(test) else None
        if key is not None and key not in self.tracked_tests:
            key = None
        if key is not None:
            self.cond_names[key] = _read_names(test)
        body_in: set[State] = set()
        else_in: set[State] = set()
        for state in states:
            taken = None
            if key is not None:
                if ("cond", key, True) in state:
                    taken = True
                elif ("cond", key, False) in state:
                    taken = False
            truth = None if taken is None else taken != negated
            if truth is not False:
                body_in.add(self._branch(state, node.test, key, not negated, True))
            if truth is not True:
                else_in.add(self._branch(state, node.test, key, negated, False))
        return self.block(node.body, body_in) | self.block(node.orelse, else_in)

    def _branch(self, state: State, test: ast.expr, key: str | None, value: bool, body: bool) -> State:
        facts = set(state)
        if key is not None:
            facts.add(("cond", key, value))
        # A test on the scaler itself or on its `enabled=` flag: in the arm where the scaler is off, scale()
        # was the identity, so nothing is pending (`if scaler is not None: scaler.step(o) else: o.step()`).
        for fact in list(facts):
            if fact[0] != "scaled":
                continue
            polarity = self._polarity(test, fact[1])
            if polarity is None:
                continue
            if polarity == "unknown" or (polarity == "pos") != body:
                facts.discard(("scaled", fact[1]))
                facts.discard(("unscaled", fact[1]))
        return frozenset(facts)

    def _polarity(self, test: ast.expr, scaler: str) -> str | None:
        """'pos' if the test is true exactly when the scaler is on, 'neg' if false then, 'unknown' if it reads
        the scaler or its enabled flag some other way, None if it does not read them."""
        names, enabled_dump = self.analysis.scaler_enabled_names.get(scaler, (set(), None))
        if not self._mentions(test, scaler, names):
            return None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._polarity(test.operand, scaler)
            return {"pos": "neg", "neg": "pos"}.get(inner or "", "unknown")
        if enabled_dump is not None and ast.dump(test) == enabled_dump:
            return "pos"
        if self._is_scaler(test, scaler):
            return "pos"
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and self._is_scaler(test.left, scaler):
            other = test.comparators[0]
            if isinstance(other, ast.Constant) and other.value is None:
                if isinstance(test.ops[0], (ast.IsNot, ast.NotEq)):
                    return "pos"
                if isinstance(test.ops[0], (ast.Is, ast.Eq)):
                    return "neg"
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "is_enabled":
            return "pos" if self._is_scaler(test.func.value, scaler) else "unknown"
        if isinstance(test, ast.Attribute) and test.attr in ("_enabled", "is_enabled"):
            return "pos" if self._is_scaler(test.value, scaler) else "unknown"
        if isinstance(test, ast.BoolOp):
            parts = [self._polarity(v, scaler) for v in test.values]
            if isinstance(test.op, ast.And) and "pos" in parts:
                return "pos"  # the body runs only with the scaler on; the else arm may run either way
            if isinstance(test.op, ast.Or) and "neg" in parts:
                return "neg"
        return "unknown"

    def _mentions(self, test: ast.expr, scaler: str, names: set[str]) -> bool:
        for node in ast.walk(test):
            if isinstance(node, (ast.Name, ast.Attribute)):
                if self._is_scaler(node, scaler) or dotted(node) in names:
                    return True
        return False

    def _is_scaler(self, expr: ast.expr, scaler: str) -> bool:
        return self.analysis.resolver.ref_key(expr, self.scope) == scaler

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While, states: set[State]) -> set[State]:
        loop = _Loop()
        self.loops.append(loop)
        head = set(states)
        forever = isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and bool(node.test.value)
        for _ in range(_MAX_LOOP_PASSES):
            entry = head
            if not isinstance(node, ast.While):
                entry = {self.assign(s, [node.target], node.iter, node, False) for s in head}
            out = self.block(node.body, entry)
            grown = self._limit(head | out | loop.continues)
            if grown == head:
                break
            head = grown
        self.loops.pop()
        exits = set() if forever else head
        return self.block(node.orelse, exits) | loop.breaks

    def _try(self, node: ast.Try, states: set[State]) -> set[State]:
        body = self.block(node.body, states)
        # An exception may leave the body anywhere; the states before and after it bracket those paths.
        handler_in = states | body
        handled: set[State] = set()
        for handler in node.handlers:
            handled |= self.block(handler.body, handler_in)
        after = handled | self.block(node.orelse, body)
        return self.block(node.finalbody, after) if node.finalbody else after

    # -- transfer -------------------------------------------------------------------------------------------
    def apply_events(self, node: ast.stmt, states: set[State]) -> set[State]:
        events = self.analysis.events.get(id(node))
        if not events:
            return states
        # a lambda's events hang on the statement that defines it, but run only when it is called
        events = [e for e in events if e.scope is self.scope]
        if not events:
            return states
        result = set()
        for state in states:
            for event in events:
                state = self.transfer(event, state)
            result.add(state)
        return result

    def transfer(self, event: Event, state: State) -> State:
        kind, scaler = event.kind, event.scaler
        if kind == "backward" and event.scaled_name is not None and ("scaled_var", event.scaled_name, scaler) in state:
            kind = "scaled_backward"
        if kind == "scaled_backward" and scaler is not None:
            self._reach(event, state)
            return (state - {("unscaled", scaler)}) | {("scaled", scaler)}
        if kind == "unscale" and scaler is not None:
            return state | {("unscaled", scaler)}
        if kind == "scaler_step" and scaler is not None:
            return state - {("scaled", scaler), ("unscaled", scaler)}
        if kind == "clip":
            pending = {f[1] for f in state if f[0] == "scaled" and ("unscaled", f[1]) not in state}
            event.pending_unscale = event.pending_unscale | pending
        elif kind == "optimizer_step":
            event.pending_step = event.pending_step | {f[1] for f in state if f[0] == "scaled"}
        elif kind in ("backward", "framework_backward"):
            self._reach(event, state)
        return state

    def _reach(self, event: Event, state: State) -> None:
        if event.loss is not None:
            found = self.taint_of(event.loss, event.stmt, state, event.autocast)
            if found:
                event.reached = event.reached | {self.analysis.regions[i] for i in found}

    def taint_of(self, expr: ast.expr, stmt: ast.stmt, state: State, use: RegionUse | None = None) -> frozenset[int]:
        """Autocast regions the value of `expr` comes from, on the path described by `state`."""
        if not self.track_taint:
            return frozenset()
        names, regions = self._static(expr, stmt, use)
        found = {fact[2] for fact in state if fact[0] == "taint" and fact[1] in names}
        return regions | found if found else regions

    def _static(self, expr: ast.expr, stmt: ast.stmt, use: RegionUse | None) -> tuple[frozenset[str], frozenset[int]]:
        """What does not depend on the path: the names `expr` reads, and the regions it is computed under
        (a call inside an autocast block) or returned from (a call of a function that returns autocast output)."""
        cached = self.static.get(id(expr))
        if cached is not None:
            return cached
        regions: set[int] = set()
        calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call)]
        if calls:
            use = use or self.model.statement_autocast.get(id(stmt))
            if use is not None:
                regions.add(self.analysis.region_index[id(use.region)])  # computed right here, under autocast
            for call in calls:
                function = self.analysis.resolver.function_for(call.func, self.scope)
                if function is not None:
                    regions |= self.analysis.returns.get(id(function), frozenset())
        cached = (frozenset(_read_names(expr)), frozenset(regions))
        self.static[id(expr)] = cached
        return cached

    def assign(self, state: State, targets: list[ast.expr], value: ast.expr, stmt: ast.stmt, augmented: bool) -> State:
        if not self.track_taint and not self.cond_names and not self.scaled_names:
            return state
        regions = self.taint_of(value, stmt, state)
        replaced: set[str] = set()  # names whose old value is gone
        updated: set[str] = set()  # `x += v`, `d[k] = v`: the old value partly stays
        for target in targets:
            _target_names(target, updated if augmented else replaced, updated)
        written = replaced | updated
        facts = {f for f in state if not (f[0] in ("taint", "scaled_var") and f[1] in replaced)}
        if self.scaled_names and _is_scale(value):
            scaler = self.analysis.resolver.ref_key(value.func.value, self.scope)  # type: ignore[attr-defined]
            for name in replaced & self.scaled_names:
                facts.add(("scaled_var", name, scaler))
        facts = {f for f in facts if not (f[0] == "cond" and self.cond_names.get(f[1], set()) & written)}
        for name in written & self.relevant:
            for region in regions:
                facts.add(("taint", name, region))
        return frozenset(facts)


def _strip_not(test: ast.expr) -> tuple[ast.expr, bool]:
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    return test, negated


def _trackable(test: ast.expr) -> bool:
    """A test that gives the same answer twice unless a name it reads is reassigned: no calls, no await."""
    return not any(isinstance(n, (ast.Call, ast.Await, ast.NamedExpr, ast.Yield)) for n in ast.walk(test))


def _read_names(expr: ast.expr) -> set[str]:
    names = set()
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = dotted(node)
            if text:
                names.add(text)
    return names


def _target_names(target: ast.expr, replaced: set[str], updated: set[str]) -> None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _target_names(element, replaced, updated)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, replaced, updated)
    elif isinstance(target, ast.Subscript):
        _target_names(target.value, updated, updated)  # `d[k] = v` keeps d's other items
    else:
        text = dotted(target)
        if text:
            replaced.add(text)


def _is_scale(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "scale"


def _feed(feeds: dict[str, set[str]], targets: list[ast.expr], value: ast.expr) -> None:
    """Record that the names written by `targets` are computed from the names `value` reads."""
    written: set[str] = set()
    for target in targets:
        _target_names(target, written, written)
    read = _read_names(value)
    for name in written:
        feeds.setdefault(name, set()).update(read)


def _function_bodies(model: ScriptModel) -> list[tuple[Scope, list[ast.stmt]]]:
    bodies: list[tuple[Scope, list[ast.stmt]]] = []
    for scope in model.table.by_node.values():
        node = scope.node
        if scope.kind == "module" and isinstance(node, ast.Module):
            bodies.append((scope, node.body))
        elif scope.kind == "function" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bodies.append((scope, node.body))
    return bodies


def run_flow(model: ScriptModel) -> None:
    if not model.events and not model.all_regions:
        return
    analysis = _Analysis(model)
    bodies = _function_bodies(model)
    # Two rounds: the first learns which functions return autocast outputs, the second lets callers see it.
    rounds = 2 if model.all_regions else 1
    for _ in range(rounds):
        for scope, body in bodies:
            function = _Function(analysis, scope, body)
            if not function.worth_running():
                continue
            returned = function.run()
            if returned:
                analysis.returns[id(scope)] = returned
