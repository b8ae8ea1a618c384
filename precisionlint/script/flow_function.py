"""Path-sensitive ordering inside one function: a small abstract interpreter over statements.

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

from precisionlint.core.records import ValueRecord
from precisionlint.script.flow_liveness import liveness
from precisionlint.script.flow_names import feed, is_scale, read_names, strip_not, target_names
from precisionlint.script.flow_shared import FileAnalysis
from precisionlint.script.flow_states import PROTOCOL, Fact, State, apply_summary
from precisionlint.script.loop_iterations import runs_at_least_once
from precisionlint.script.model import Event, RegionUse
from precisionlint.script.names import dotted
from precisionlint.script.scopes import Scope
from precisionlint.sources.python_index import walk

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


class FunctionFlow:
    """One function's body (or the module's) interpreted from its entry states; flow.py runs it in rounds."""

    def __init__(self, analysis: FileAnalysis, scope: Scope, body: list[ast.stmt]) -> None:
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
        self.ends: dict[int, int] = {}  # id(statement) -> last pre-order position inside it (see liveness)
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
        facts = self.analysis.facts
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
                        feed(feeds, [node.target], node.iter, facts)
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    here |= scan(node.body)
                elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                    handlers = [stmt for handler in node.handlers for stmt in handler.body]  # type: ignore[attr-defined]
                    here |= scan(node.body) | scan(handlers) | scan(node.orelse) | scan(node.finalbody)  # type: ignore[attr-defined]
                elif isinstance(node, ast.Match):
                    here |= scan([stmt for case in node.cases for stmt in case.body])
                elif self.track_taint:
                    if isinstance(node, ast.Assign):
                        feed(feeds, node.targets, node.value, facts)
                    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                        feed(feeds, [node.target], node.value, facts)
                    elif isinstance(node, ast.Return) and node.value is not None:
                        wanted.update(facts.of(node.value)[0])
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
                cached = (set(self.tracked_tests), *liveness(self.body, self.tracked_tests, self.analysis.test_key,
                                                                 facts))
                self.analysis.liveness[id(self.scope)] = cached
            _, self.ends, self.last_read, self.last_test = cached
        if not self.track_taint:
            return
        for event in self.own_events:
            if event.loss is not None:
                wanted.update(facts.of(event.loss)[0])
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
            self.cond_names[key] = read_names(test, self.analysis.facts)
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
                    frozenset(f for f in state if f[0] in PROTOCOL and f[1] in analysis.shared) for state in states
                )
            summary = analysis.summaries.get(id(callee))
            if summary:
                states = self._limit({after for state in states for after in apply_summary(state, summary, callee)})
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
        names, _, calls = self.analysis.facts.of(expr)
        if calls:
            use = use or self.model.statement_autocast.get(id(stmt))
            if use is not None:
                regions.add(self.analysis.region_index[id(use.region)])  # computed right here, under autocast
            for call in calls:
                function = self.analysis.resolver.function_for(call.func, self.scope)
                if function is not None:
                    regions |= self.analysis.returns.get(id(function), frozenset())
        cached = (names, frozenset(regions))
        self.static[id(expr)] = cached
        return cached

    def assign(self, state: State, targets: list[ast.expr], value: ast.expr, stmt: ast.stmt, augmented: bool) -> State:
        if not self.track_taint and not self.cond_names and not self.scaled_names:
            return state
        regions = self.taint_of(value, stmt, state)
        replaced: set[str] = set()  # names whose old value is gone
        updated: set[str] = set()  # `x += v`, `d[k] = v`: the old value partly stays
        for target in targets:
            target_names(target, updated if augmented else replaced, updated)
        written = replaced | updated
        facts = {f for f in state if not (f[0] in ("taint", "scaled_var") and f[1] in replaced)}
        if self.scaled_names and is_scale(value):
            scaler = self.analysis.resolver.ref_key(value.func.value, self.scope)  # type: ignore[attr-defined]
            for name in replaced & self.scaled_names:
                facts.add(("scaled_var", name, scaler))
        facts = {f for f in facts if not (f[0] == "cond" and self.cond_names.get(f[1], set()) & written)}
        for name in written & self.relevant:
            for region in regions:
                facts.add(("taint", name, region))
        return frozenset(facts)


def _scanned(statements: list[ast.stmt]) -> bool:
    """What `scan` in FunctionFlow.prepare is rebound to once the function is prepared."""
    return False
