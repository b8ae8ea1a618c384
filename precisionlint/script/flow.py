"""The flow analysis of a file: each function's abstract interpretation (flow_function.py), in an order that
lets what one function does reach the functions it calls and that call it.

Results are written on the events: clip events get `pending_unscale`, optimizer steps `pending_step`,
backward calls `reached` (the autocast regions whose outputs their loss is computed from).
"""

from __future__ import annotations

import ast

from precisionlint.script.flow_function import FunctionFlow
from precisionlint.script.flow_shared import FileAnalysis
from precisionlint.script.flow_states import STATUSES, Fact, State, Summary, status_facts, status_of
from precisionlint.script.model import ScriptModel
from precisionlint.script.scopes import Scope


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
    analysis = FileAnalysis(model)
    bodies = _function_bodies(model)
    if not analysis.shared:
        _one_round(analysis, bodies)
        return
    if model.all_regions:
        # A first round learns which functions return autocast outputs, so that callers see it in the next.
        for scope, body in bodies:
            function = FunctionFlow(analysis, scope, body)
            if function.worth_running():
                returned = function.run()
                if returned:
                    analysis.returns[id(scope)] = returned
    if analysis.shared:
        _summarize(analysis, bodies)
        bodies = _callers_first(analysis, bodies)
    for scope, body in bodies:
        function = FunctionFlow(analysis, scope, body)
        if not function.worth_running() and id(scope) not in analysis.entries:
            continue
        function.entry = _entry_states(analysis, scope)
        returned = function.run()
        if returned:
            analysis.returns[id(scope)] = returned


def _one_round(analysis: FileAnalysis, bodies: list[tuple[Scope, list[ast.stmt]]]) -> None:
    """Where no scaler is shared between functions, nothing one function does reaches another but the autocast
    outputs it returns: each function runs once, callees first, so that every call reads its callee's returns
    (two rounds in file order ran every function twice, and still missed a chain of callers written before
    their callees)."""
    model = analysis.model
    if model.all_regions:
        bodies = _callees_first(analysis, bodies)
    for scope, body in bodies:
        if id(scope) not in analysis.scopes_with_events and (scope.kind == "module" or scope.name not in
                                                             model.call_names):
            # with no event of its own, a function's run yields only what it returns, and no call in the file
            # can read that (a module returns nothing; a def named by no call is called by none)
            continue
        function = FunctionFlow(analysis, scope, body)
        if function.worth_running():
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


def _postorder(analysis: FileAnalysis, bodies: list[tuple[Scope, list[ast.stmt]]]) -> list[int]:
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


def _summarize(analysis: FileAnalysis, bodies: list[tuple[Scope, list[ast.stmt]]]) -> None:
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
        for status in STATUSES if function_id in called else ("clean",):
            function = FunctionFlow(analysis, scope, body)
            function.recording = False
            function.track_taint = False
            function.entry = {frozenset(f for scaler in own for f in status_facts(scaler, status, False))}
            function.run()
            for scaler in own:
                summary.setdefault(scaler, {})[status] = frozenset(status_of(e, scaler) for e in function.exits)
        summary = {k: v for k, v in summary.items() if any(v[st] != {st} for st in v)}
        if summary:
            analysis.summaries[function_id] = summary


def _callees_first(
    analysis: FileAnalysis, bodies: list[tuple[Scope, list[ast.stmt]]]
) -> list[tuple[Scope, list[ast.stmt]]]:
    by_id = {id(scope): (scope, body) for scope, body in bodies}
    return [by_id[i] for i in _postorder(analysis, bodies)]


def _callers_first(
    analysis: FileAnalysis, bodies: list[tuple[Scope, list[ast.stmt]]]
) -> list[tuple[Scope, list[ast.stmt]]]:
    by_id = {id(scope): (scope, body) for scope, body in bodies}
    return [by_id[i] for i in reversed(_postorder(analysis, bodies))]


def _entry_states(analysis: FileAnalysis, scope: Scope) -> set[State]:
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
        inferred.extend(status_facts(scaler, status, True) for status in statuses)
    return entry | {frozenset(facts) for facts in inferred}
