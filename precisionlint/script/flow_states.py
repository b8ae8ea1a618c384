"""The states of the flow analysis, and a GradScaler's status in one: clean, scaled, or scaled then unscaled.

A state is a frozenset of facts (tuples; flow_function.py lists them). A function's summary maps, for each shared
scaler it moves, each status on entry to the statuses on exit; applying it at a call moves the caller's states.
"""

from __future__ import annotations

from precisionlint.script.scopes import Scope

Fact = tuple
State = frozenset
PROTOCOL = ("scaled", "unscaled", "far")
Status = str  # "clean" | "scaled" | "unscaled" (scaled, then unscaled)
STATUSES: tuple[Status, ...] = ("clean", "scaled", "unscaled")
Summary = dict[str, dict[Status, frozenset[Status]]]


def status_of(state: State, scaler: str) -> Status:
    if ("scaled", scaler) not in state:
        return "clean"
    return "unscaled" if ("unscaled", scaler) in state else "scaled"


def status_facts(scaler: str, status: Status, far: bool) -> set[Fact]:
    if status == "clean":
        return set()
    found: set[Fact] = {("scaled", scaler)}
    if status == "unscaled":
        found.add(("unscaled", scaler))
    if far:
        found.add(("far", scaler))
    return found


def apply_summary(state: State, summary: Summary, callee: Scope) -> list[State]:
    results = [state]
    for scaler, table in summary.items():
        outs = table.get(status_of(state, scaler))
        if outs is None:
            continue
        base_far = ("far", scaler) in state
        updated = []
        for current in results:
            base = current - {("scaled", scaler), ("unscaled", scaler), ("far", scaler)}
            for out in outs:
                unchanged = out == status_of(state, scaler)
                updated.append(frozenset(base | status_facts(scaler, out, base_far if unchanged else True)))
        results = updated
    return results
