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
from collections.abc import Callable, Iterable

from precisionlint.core.records import ValueRecord
from precisionlint.script.grad_mode import without_grad
from precisionlint.script.model import Event, RegionUse, ScriptModel
from precisionlint.script.names import dotted
from precisionlint.script.scopes import Scope
from precisionlint.sources.python_index import walk

Fact = tuple
State = frozenset
_MAX_STATES = 64
_MAX_LOOP_PASSES = 6


class _Loop(ValueRecord):
    # A plain class rather than a dataclass: importing dataclasses costs every check run's workers several
    # milliseconds (precisionlint/core/records.py has the numbers).
    __slots__ = ("breaks", "continues")
    _fields = __slots__

    def __init__(self, breaks: set[State] | None = None, continues: set[State] | None = None) -> None:
        self.breaks: set[State] = set() if breaks is None else breaks
        self.continues: set[State] = set() if continues is None else continues


class _Analysis:
    """Shared by every function of the file."""

    def __init__(self, model: ScriptModel) -> None:
        self.model = model
        self.resolver = model.resolver
        self.regions = model.all_regions
        self.region_index = {id(r): i for i, r in enumerate(self.regions)}
        self.events: dict[int, list[Event]] = {}
        # id(scope) -> its events: every per-function question is answered from here, so the whole file costs
        # one pass over the events rather than one per function (3,000 functions must stay linear)
        self.events_by_scope: dict[int, list[Event]] = {}
        for event in model.events:
            self.events.setdefault(id(event.stmt), []).append(event)
            self.events_by_scope.setdefault(id(event.scope), []).append(event)
        self.returns: dict[int, frozenset[int]] = {}  # id(function scope) -> regions its results come from
        self.no_grad: dict[int, bool] = {}  # region index -> entered only without autograd, when first asked
        self.scopes_with_events = set(self.events_by_scope)
        # Scalers more than one function can see: attributes of `self` and module globals (see run_flow)
        self.shared: set[str] = {key for key, info in model.scalers.items() if info.local_to is None}
        self.involved: set[int] = set()  # functions that move a shared scaler, themselves or through a call
        # functions whose clips and optimizer steps want to know the state they are called in
        self.listening: set[int] = {
            id(e.scope) for e in model.events if e.kind in ("clip", "optimizer_step")
        }
        self.summaries: dict[int, Summary] = {}
        self.entries: dict[int, set[State]] = {}  # id(function) -> states at its call sites (recording pass)
        self._callees: dict[int, list[Scope]] = {}
        # id(scope) -> (tracked tests, _liveness(...)): computed once, reused by the second round
        self.liveness: dict[int, tuple[set[str], dict[int, int], dict[str, int], dict[str, int]]] = {}
        self.scaler_enabled_names: dict[str, tuple[set[str], str | None]] = {}
        for key, info in model.scalers.items():
            expr = info.enabled_expr
            names = (
                {d for d in (dotted(n) for n in walk(expr) if isinstance(n, (ast.Name, ast.Attribute))) if d}
                if expr
                else set()
            )
            self.scaler_enabled_names[key] = (names, ast.dump(expr) if expr is not None else None)
        # id(test) -> ast.dump(test), or None when the test is not _trackable: each `if` is split once per state
        # set and per round, and dumping its test each time cost more than the split itself
        self._test_keys: dict[int, str | None] = {}

    def without_grad(self, index: int) -> bool:
        known = self.no_grad.get(index)
        if known is None:
            known = self.no_grad[index] = without_grad(self.model, self.regions[index])
        return known

    def test_key(self, test: ast.expr) -> str | None:
        """What identifies a trackable test (its dump: the same test written twice has the same key)."""
        found = self._test_keys.get(id(test), "")
        if found == "":
            found = self._test_keys[id(test)] = ast.dump(test) if _trackable(test) else None
        return found


    def callees(self, node: ast.stmt, scope: Scope) -> list[Scope]:
        """This file's functions called by the statement (its header for a compound statement), in evaluation
        order (a call's arguments first)."""
        cached = self._callees.get(id(node))
        if cached is not None:
            return cached
        calls: list[ast.Call] = []
        for part in _header_parts(node):
            calls.extend(n for n in walk(part) if isinstance(n, ast.Call))
        calls.sort(key=lambda c: (c.end_lineno or 0, c.end_col_offset or 0))
        found = [f for f in (self.resolver.function_for(c.func, scope) for c in calls) if f is not None]
        self._callees[id(node)] = found
        return found


def _header_parts(node: ast.stmt) -> list[ast.AST]:
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
        self.recording = True  # False while computing a summary: results are not written on the events
        self.entry: set[State] = {frozenset()}
        self.exits: set[State] = set()  # states leaving the function (the end of the body, each return)
        self.own_events = analysis.events_by_scope.get(id(scope), [])
        self.scaled_names = {e.scaled_name for e in self.own_events if e.scaled_name is not None}
        self.ends: dict[int, int] = {}  # id(statement) -> last pre-order position inside it (see _liveness)
        self.last_read: dict[str, int] = {}  # name -> last position that may read it
        self.last_test: dict[str, int] = {}  # tracked `if` test -> last position that may evaluate it

    def worth_running(self) -> bool:
        return self.track_taint or id(self.scope) in self.analysis.scopes_with_events

    def prepare(self) -> None:
        """One pass over the statements (not the expressions) of the body: which `if` tests to correlate, and
        which names to track taint for.

        Only tests that occur twice can correlate, and only around the calls we order; tracking the others
        would multiply the states for nothing. Taint is tracked only for names whose value can flow into a
        backward call or a return value (a backward slice over the assignments)."""
        event_statements = {id(e.stmt) for e in self.own_events}
        tests: dict[str, int] = {}
        feeds: dict[str, set[str]] = {}
        wanted: set[str] = set()

        looping = [0]  # how many loops enclose the statements being scanned

        def scan(statements: list[ast.stmt]) -> bool:
            found = False
            for node in statements:
                # statements under autocast matter too: their outputs are what taint tracks
                here = id(node) in event_statements or (
                    self.track_taint and self.model.statement_autocast.get(id(node)) is not None
                )
                if isinstance(node, ast.If):
                    # an elif chain is a chain of nested `if`s: walk it in a loop, not one call per branch
                    chain = [node]
                    while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
                        chain.append(chain[-1].orelse[0])  # type: ignore[arg-type]
                    inner = scan(chain[-1].orelse)
                    for link in reversed(chain):
                        inner |= scan(link.body)
                        link_here = link is node and here
                        if link is not node:
                            link_here = id(link) in event_statements or (
                                self.track_taint and self.model.statement_autocast.get(id(link)) is not None
                            )
                        test, _ = strip_not(link.test)
                        key = self.analysis.test_key(test) if inner or link_here else None
                        if key is not None:
                            # inside a loop the next iteration evaluates the same test again: `if cfg.fp16:
                            # scaled backward ... else: plain backward + optimizer.step()` cannot mix paths
                            tests[key] = tests.get(key, 0) + (2 if looping[0] else 1)
                        inner |= link_here
                    here |= inner
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                    looping[0] += 1
                    here |= scan(node.body)
                    looping[0] -= 1
                    here |= scan(node.orelse)
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
        # A recursive closure refers to itself: a reference cycle that would keep this function's tree (and the
        # whole model) alive until the cyclic collector walks it. Rebinding the name breaks the cycle.
        scan = _scanned
        self.tracked_tests = {key for key, count in tests.items() if count > 1}
        if self.track_taint or self.tracked_tests or self.scaled_names:  # else no fact can outlive its use
            cached = self.analysis.liveness.get(id(self.scope))
            if cached is None or cached[0] != self.tracked_tests:
                cached = (set(self.tracked_tests), *_liveness(self.body, self.tracked_tests, self.analysis.test_key))
                self.analysis.liveness[id(self.scope)] = cached
            _, self.ends, self.last_read, self.last_test = cached
        if not self.track_taint:
            return
        for event in self.own_events:
            if event.loss is not None:
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
        self.exits |= self.block(self.body, set(self.entry))
        return frozenset(self.returned)

    def block(self, statements: Iterable[ast.stmt], states: set[State]) -> set[State]:
        for statement in statements:
            if not states:
                break  # unreachable after return / raise / break / continue
            states = self._limit(self._forget(self.statement(statement, states), statement))
        return states

    def _forget(self, states: set[State], statement: ast.stmt) -> set[State]:
        """Drop the facts no later statement can read: taint of a name never read again, a test never evaluated
        again. Without this a module of 3,000 `x_i = model(...)` lines carries 3,000 facts in every state and each
        statement copies them all (quadratic); with it a state holds only what is still live."""
        end = self.ends.get(id(statement))
        if end is None:
            return states
        result = set()
        for state in states:
            dead = [f for f in state if self._dead(f, end)]
            result.add(state.difference(dead) if dead else state)
        return result

    def _dead(self, fact: Fact, end: int) -> bool:
        kind = fact[0]
        if kind in ("taint", "scaled_var"):
            return self.last_read.get(fact[1], -1) <= end
        if kind == "cond":
            return self.last_test.get(fact[1], -1) <= end
        return False

    def _limit(self, states: set[State]) -> set[State]:
        """Keep the state count bounded by dropping whole paths, the fewest facts first kept: a dropped path can
        only hide a finding. (Forgetting facts instead would merge paths and could invent one.)"""
        if len(states) <= _MAX_STATES:
            return states
        return set(sorted(states, key=lambda s: (len(s), sorted(map(repr, s))))[:_MAX_STATES])

    def statement(self, node: ast.stmt, states: set[State]) -> set[State]:
        states = self.apply_calls(node, states)
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
            self.exits |= states
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
        result: set[State] = set()
        while True:
            body_in, else_in = self._split(node, states)
            result |= self.block(node.body, body_in)
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If) and else_in:
                # `elif`: the next test in this loop rather than one nested call per branch (3,000 branches)
                node = orelse[0]
                states = self._limit(self.apply_events(node, else_in))
                continue
            return self._limit(result | self.block(orelse, else_in))

    def _split(self, node: ast.If, states: set[State]) -> tuple[set[State], set[State]]:
        """The states entering the body and the else arm of `node`."""
        test, negated = strip_not(node.test)
        key = self.analysis.test_key(test) if self.tracked_tests else None
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
        return body_in, else_in

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
                facts.discard(("far", fact[1]))
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
        for node in walk(test):
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
        once = not isinstance(node, ast.While) and runs_at_least_once(node.iter)
        iterated: set[State] = set()  # states at the end of some iteration (the head after one pass or more)
        for _ in range(_MAX_LOOP_PASSES):
            entry = head
            if not isinstance(node, ast.While):
                entry = {self.assign(s, [node.target], node.iter, node, False) for s in head}
            out = self.block(node.body, entry)
            iterated |= out | loop.continues
            grown = self._limit(head | out | loop.continues)
            if grown == head:
                break
            head = grown
        self.loops.pop()
        # `for opt in optimizers: scaler.unscale_(opt)`: a loop over a collection that cannot be empty in a
        # working program leaves only through an iteration; the zero-iteration path would be a false alarm
        exits = set() if forever else self._limit(iterated) if once else head
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
    def apply_calls(self, node: ast.stmt, states: set[State]) -> set[State]:
        """Calls of this file's functions in the statement (its header for a compound statement), in evaluation
        order: the callee's summary moves the scalers it scales, unscales or steps; in the recording pass the
        states at the call become the callee's entry states."""
        analysis = self.analysis
        if not analysis.shared:
            return states
        callees = analysis.callees(node, self.scope)
        for callee in callees:
            if self.recording and (id(callee) in analysis.involved or id(callee) in analysis.listening):
                analysis.entries.setdefault(id(callee), set()).update(
                    frozenset(f for f in state if f[0] in _PROTOCOL and f[1] in analysis.shared) for state in states
                )
            summary = analysis.summaries.get(id(callee))
            if summary:
                states = self._limit({after for state in states for after in _apply_summary(state, summary, callee)})
        return states

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
            return (state - {("unscaled", scaler), ("far", scaler)}) | {("scaled", scaler)}
        if kind == "unscale" and scaler is not None:
            return state | {("unscaled", scaler)}
        if kind == "scaler_step" and scaler is not None:
            return state - {("scaled", scaler), ("unscaled", scaler), ("far", scaler)}
        if not self.recording:
            return state
        if kind == "clip":
            pending = {
                f[1]
                for f in state
                if f[0] == "scaled" and ("unscaled", f[1]) not in state and self._counts_here(f[1], state, "unscale")
            }
            event.pending_unscale = event.pending_unscale | pending
        elif kind == "optimizer_step":
            event.pending_step = event.pending_step | {
                f[1] for f in state if f[0] == "scaled" and self._counts_here(f[1], state, "scaler_step")
            }
        elif kind in ("backward", "framework_backward"):
            self._reach(event, state)
        return state

    def _counts_here(self, scaler: str, state: State, handler: str) -> bool:
        """A scaled backward from another function counts only where this function never calls `handler` for
        that scaler itself: a function that unscales (or steps) in some branch handles the protocol by a flag
        this analysis cannot see across the call (`if self.amp: self.scaler.unscale_(opt)`)."""
        if ("far", scaler) not in state:
            return True
        return not any(e.kind == handler and e.scaler == scaler for e in self.own_events)

    def _reach(self, event: Event, state: State) -> None:
        if event.loss is not None:
            found = self.taint_of(event.loss, event.stmt, state, event.autocast)
            if found:
                # a region entered only under torch.no_grad() feeds the loss a constant: no gradient of the
                # backward passes through it (script.grad_mode)
                event.reached = event.reached | {self.analysis.regions[i] for i in found
                                                 if not self.analysis.without_grad(i)}

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
        calls = [n for n in walk(expr) if isinstance(n, ast.Call)]
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


_FOREVER = 1 << 60
_STATEMENT_LISTS = ("body", "orelse", "finalbody")


def _liveness(
    body: list[ast.stmt], tracked: set[str], test_key: Callable[[ast.expr], str | None]
) -> tuple[dict[int, int], dict[str, int], dict[str, int]]:
    """Number the statements of a function in source order (pre-order) and find, for every name, the last
    position that may read it, and for every tracked test the last position that may evaluate it.

    A read inside a loop counts at the loop's end (the next iteration reads it again); a read inside a nested
    def, class or lambda counts forever (it may run any time later). Iterative, so a 3,000-branch elif chain
    does not recurse 3,000 deep.
    Returns (id(statement) -> last position inside it, name -> last read, test -> last evaluation)."""
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
            reads.extend((name, _FOREVER, None) for name in _reads(node)[0])
            continue
        inner = loop if loop is not None else node if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) else None
        children: list[ast.stmt] = []
        headers: list[ast.AST] = []
        for field_name, value in ast.iter_fields(node):
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
            names, deferred = _reads(header)
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


# Words in the name of a collection a training program never leaves empty: its optimizers (and the schedulers
# and scalers kept beside them), its parameter groups, its training batches. Looping over an empty one would be
# a bug of its own.
_NONEMPTY_WORDS = frozenset({"optimizers", "optims", "opts", "schedulers", "scalers", "loaders", "groups"})
_MAP_WORDS = frozenset({"optimizers", "optimizer", "optims", "optim", "opts", "opt"})


def _words(text: str) -> list[str]:
    return text.rsplit(".", 1)[-1].lower().split("_")

def runs_at_least_once(iterable: ast.expr) -> bool:
    """The loop body runs at least once: a non-empty literal, `range(k)` with a literal k >= 1, or a collection
    of optimizers / parameter groups / a training loader (`for opt in optimizers`, `zip(optims, scalers)`,
    `enumerate(train_loader)`, `self.optimizer.param_groups`)."""
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
        return bool(iterable.elts) and not any(isinstance(e, ast.Starred) for e in iterable.elts)
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        name = iterable.func.id
        if name == "range" and len(iterable.args) == 1:
            bound = iterable.args[0]
            return isinstance(bound, ast.Constant) and isinstance(bound.value, int) and bound.value >= 1
        if name in ("zip", "enumerate", "reversed", "list", "tuple", "sorted") and iterable.args:
            parts = iterable.args if name == "zip" else iterable.args[:1]
            return all(runs_at_least_once(part) for part in parts)
        return False
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute):
        text = dotted(iterable.func.value)
        if iterable.func.attr in ("values", "items") and not iterable.args and text is not None:
            return bool(_MAP_WORDS.intersection(_words(text)))  # `optimizers_dict.values()`
        return False
    text = dotted(iterable)
    if text is None:
        return False
    words = _words(text)
    return bool(_NONEMPTY_WORDS.intersection(words)) or words[-1].endswith("loader")


def _reads(node: ast.AST) -> tuple[set[str], bool]:
    """The names and attribute chains `node` mentions, and whether it holds a lambda (code that runs later)."""
    names = set()
    deferred = False
    for child in walk(node):
        if isinstance(child, (ast.Name, ast.Attribute)):
            text = dotted(child)
            if text:
                names.add(text)
        elif isinstance(child, ast.Lambda):
            deferred = True
    return names, deferred


def _scanned(statements: list[ast.stmt]) -> bool:
    """What `scan` in _Function.prepare is rebound to once the function is prepared."""
    return False


def strip_not(test: ast.expr) -> tuple[ast.expr, bool]:
    """`not not x` -> (x, False), `not x` -> (x, True)."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    return test, negated


def _trackable(test: ast.expr) -> bool:
    """A test that gives the same answer twice unless a name it reads is reassigned: no calls, no await."""
    return not any(isinstance(n, (ast.Call, ast.Await, ast.NamedExpr, ast.Yield)) for n in walk(test))


def _read_names(expr: ast.expr) -> set[str]:
    names = set()
    for node in walk(expr):
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
    if model.all_regions:
        # A first round learns which functions return autocast outputs, so that callers see it in the next.
        for scope, body in bodies:
            function = _Function(analysis, scope, body)
            if function.worth_running():
                returned = function.run()
                if returned:
                    analysis.returns[id(scope)] = returned
    if analysis.shared:
        _summarize(analysis, bodies)
        bodies = _callers_first(analysis, bodies)
    for scope, body in bodies:
        function = _Function(analysis, scope, body)
        if not function.worth_running() and id(scope) not in analysis.entries:
            continue
        function.entry = _entry_states(analysis, scope)
        returned = function.run()
        if returned:
            analysis.returns[id(scope)] = returned


# -- across functions --------------------------------------------------------------------------------------------
#
# A GradScaler kept on `self` or in a module global is shared by the functions of the file: `Trainer.backward_step`
# scales, `Trainer.optimizer_step` clips and steps. Each function that moves such a scaler gets a summary (for
# each scaler, each status on entry -> the statuses on exit), computed callees first; a call applies the callee's
# summary. Then every function runs once more, callers first, from the states its call sites reach (a function
# no one in the file calls starts clean, or, when it steps a scaler it never scales, from the statuses the
# functions that scale it leave behind). Facts that come from another function are marked ("far", scaler).

_PROTOCOL = ("scaled", "unscaled", "far")
Status = str  # "clean" | "scaled" | "unscaled" (scaled, then unscaled)
_STATUSES: tuple[Status, ...] = ("clean", "scaled", "unscaled")
Summary = dict[str, dict[Status, frozenset[Status]]]


def _status(state: State, scaler: str) -> Status:
    if ("scaled", scaler) not in state:
        return "clean"
    return "unscaled" if ("unscaled", scaler) in state else "scaled"


def _facts(scaler: str, status: Status, far: bool) -> set[Fact]:
    if status == "clean":
        return set()
    found: set[Fact] = {("scaled", scaler)}
    if status == "unscaled":
        found.add(("unscaled", scaler))
    if far:
        found.add(("far", scaler))
    return found


def _apply_summary(state: State, summary: Summary, callee: Scope) -> list[State]:
    results = [state]
    for scaler, table in summary.items():
        outs = table.get(_status(state, scaler))
        if outs is None:
            continue
        base_far = ("far", scaler) in state
        updated = []
        for current in results:
            base = current - {("scaled", scaler), ("unscaled", scaler), ("far", scaler)}
            for out in outs:
                unchanged = out == _status(state, scaler)
                updated.append(frozenset(base | _facts(scaler, out, base_far if unchanged else True)))
        results = updated
    return results


def _postorder(analysis: _Analysis, bodies: list[tuple[Scope, list[ast.stmt]]]) -> list[int]:
    """Function ids, callees before callers (a cycle is cut where it closes). Iterative: call chains may be long."""
    calls = analysis.model.calls
    known = {id(scope) for scope, _ in bodies}
    order: list[int] = []
    seen: set[int] = set()
    for root, _ in bodies:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(id(root), iter(sorted(calls.get(id(root), ()))))]
        while stack:
            node, children = stack[-1]
            advanced = False
            for child in children:
                if child in known and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(sorted(calls.get(child, ())))))
                    advanced = True
                    break
            if not advanced:
                order.append(node)
                stack.pop()
    return order


def _summarize(analysis: _Analysis, bodies: list[tuple[Scope, list[ast.stmt]]]) -> None:
    by_id = {id(scope): (scope, body) for scope, body in bodies}
    called = {callee for callees in analysis.model.calls.values() for callee in callees}
    scalers_of: dict[int, set[str]] = {}
    # scalers some function steps or unscales without scaling them itself: that function's entry is inferred from
    # what the scaling functions leave behind (see _entry_states), so those need a summary even when uncalled
    stepped_only: set[str] = set()
    for events in analysis.events_by_scope.values():
        scaled = {e.scaler for e in events if e.kind == "scaled_backward" or e.scaled_name is not None}
        stepped_only |= {
            e.scaler for e in events if e.kind in ("scaler_step", "unscale") and e.scaler and e.scaler not in scaled
        }
    for function_id in _postorder(analysis, bodies):
        scope, body = by_id[function_id]
        own = {e.scaler for e in analysis.events_by_scope.get(function_id, []) if e.scaler in analysis.shared}
        for callee in analysis.model.calls.get(function_id, ()):
            own |= scalers_of.get(callee, set())
        own.discard(None)  # type: ignore[arg-type]
        if not own:
            continue
        scalers_of[function_id] = own  # type: ignore[assignment]
        analysis.involved.add(function_id)
        scales = any(
            e.scaler in stepped_only and (e.kind == "scaled_backward" or e.scaled_name is not None)
            for e in analysis.events_by_scope.get(function_id, [])
        )
        if function_id not in called and not scales:
            continue  # nobody here calls it and no other function waits for what it leaves: no summary needed
        summary: Summary = {}
        for status in _STATUSES if function_id in called else ("clean",):
            function = _Function(analysis, scope, body)
            function.recording = False
            function.track_taint = False
            function.entry = {frozenset(f for scaler in own for f in _facts(scaler, status, False))}
            function.run()
            for scaler in own:
                summary.setdefault(scaler, {})[status] = frozenset(_status(e, scaler) for e in function.exits)
        summary = {k: v for k, v in summary.items() if any(v[st] != {st} for st in v)}
        if summary:
            analysis.summaries[function_id] = summary


def _callers_first(
    analysis: _Analysis, bodies: list[tuple[Scope, list[ast.stmt]]]
) -> list[tuple[Scope, list[ast.stmt]]]:
    by_id = {id(scope): (scope, body) for scope, body in bodies}
    return [by_id[i] for i in reversed(_postorder(analysis, bodies))]


def _entry_states(analysis: _Analysis, scope: Scope) -> set[State]:
    """Where this function may start: the states its call sites reach, else clean; and for a scaler it steps or
    unscales but never scales itself, the statuses the file's scaling functions leave it in (marked far)."""
    entry = set(analysis.entries.get(id(scope), set())) or {frozenset()}
    if id(scope) in analysis.entries or id(scope) not in analysis.involved:
        return entry
    events = analysis.events_by_scope.get(id(scope), [])
    inferred: list[set[Fact]] = []
    for scaler in sorted({e.scaler for e in events if e.kind in ("scaler_step", "unscale") and e.scaler}):
        if scaler not in analysis.shared or any(
            e.scaler == scaler and (e.kind == "scaled_backward" or e.scaled_name is not None) for e in events
        ):
            continue
        statuses = {
            out
            for other, summary in analysis.summaries.items()
            if other != id(scope) and scaler in summary
            for out in summary[scaler].get("clean", frozenset())
            if out != "clean"
        }
        inferred.extend(_facts(scaler, status, True) for status in statuses)
    return entry | {frozenset(facts) for facts in inferred}
