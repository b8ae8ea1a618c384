"""What the flow analysis of one file shares between its functions: the events by statement and by function,
which functions return autocast outputs, the scalers more than one function sees, the functions' summaries and
the states at their call sites.
"""

from __future__ import annotations

import ast

from precisionlint.script.flow_names import ExpressionFacts, header_parts, trackable
from precisionlint.script.flow_states import State, Summary
from precisionlint.script.grad_mode import without_grad
from precisionlint.script.model import Event, ScriptModel
from precisionlint.script.names import dotted
from precisionlint.script.scopes import Scope
from precisionlint.sources.python_index import walk


class FileAnalysis:
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
        self.facts = ExpressionFacts()  # one walk of each statement part, for every question the analysis asks
        # id(scope) -> (tracked tests, liveness(...)): computed once, reused by the second round
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
        # id(test) -> ast.dump(test), or None when the test is not trackable: each `if` is split once per state
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
            found = self._test_keys[id(test)] = ast.dump(test) if trackable(test) else None
        return found

    def callees(self, node: ast.stmt, scope: Scope) -> list[Scope]:
        """This file's functions called by the statement (its header for a compound statement), in evaluation
        order (a call's arguments first)."""
        cached = self._callees.get(id(node))
        if cached is not None:
            return cached
        calls: list[ast.Call] = []
        for part in header_parts(node):
            calls.extend(self.facts.of(part)[2])
        calls.sort(key=lambda c: (c.end_lineno or 0, c.end_col_offset or 0))
        found = [f for f in (self.resolver.function_for(c.func, scope) for c in calls) if f is not None]
        self._callees[id(node)] = found
        return found
