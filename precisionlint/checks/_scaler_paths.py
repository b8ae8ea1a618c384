"""Paths on which a GradScaler is absent: `scaler = GradScaler() if args.fp16 else None`, then
`if scaler is not None: scaler.scale(loss).backward() else: loss.backward()`.

A plain backward is on such a path when an `if` around it says so: `scaler is None` (or the `else` of
`scaler is not None`, of `if scaler:`), or the test the scaler is built under (`args.fp16`) with the other truth
value, or the test of its `enabled=` being false. What autocast computes on that path follows from the same
test: an autocast whose `enabled=` or `dtype=` reads it (`enabled=args.fp16`) is evaluated under the value that
leaves the scaler out (values.assume). Only an autocast that then certainly runs float16 counts: a test we
cannot follow (`torch.cuda.is_available()`) leaves `enabled=use_amp` unknown, and unknown is not float16.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, NamedTuple

from precisionlint.script.names import dotted

if TYPE_CHECKING:
    from precisionlint.script.model import AutocastRegion, Event, GradScalerInfo, ScriptModel
    from precisionlint.values.candidates import Finder

Assumption = dict[str, Any]


class NoScaler(NamedTuple):
    """A plain backward on a path where a scaler of the file is None or disabled."""

    scaler: GradScalerInfo
    guard: str  # in words: where the backward runs without it ("`scaler` is None (built only when `args.fp16`)")
    regions: list[AutocastRegion]  # the autocast regions reaching the loss that run float16 on that path


def unscaled_paths(model: ScriptModel, finder: Finder, event: Event) -> NoScaler | None:
    """The scaler that an `if` around this plain backward leaves out, and the float16 autocast regions whose
    outputs reach its loss on that path; None when there is none."""
    if not event.reached:
        return None
    tests = branch_tests(event.scope.node, event.node)
    for scaler in model.scalers.values():
        if not scaler.constructed:
            continue
        for test, holds in tests:
            found = _leaves_out(finder, scaler, test, holds, event)
            if found is None:
                continue
            assumptions, guard = found
            risky = [r for r in sorted(event.reached, key=lambda r: r.span)
                     if any(_float16(finder, r, assumed) for assumed in assumptions)]
            if risky:
                return NoScaler(scaler, guard, risky)
    return None


def branch_tests(holder: ast.AST, node: ast.AST) -> list[tuple[ast.expr, bool]]:
    """The `if` tests around `node` inside `holder`'s statements (not inside nested functions), outermost first,
    each with the branch `node` is in."""
    found: list[tuple[ast.expr, bool]] = []
    line = node.lineno  # type: ignore[attr-defined]
    body: list[ast.stmt] = list(getattr(holder, "body", []))
    while body:
        statement = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if statement is None or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if isinstance(statement, ast.If):
            if statement.body and statement.body[0].lineno <= line <= (statement.body[-1].end_lineno or 0):
                found.append((statement.test, True))
                body = statement.body
            elif statement.orelse and statement.orelse[0].lineno <= line:
                found.append((statement.test, False))
                body = statement.orelse
            else:
                break
            continue
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            body = [*statement.body, *statement.orelse]
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            body = statement.body
        elif isinstance(statement, ast.Try):
            body = [*statement.body, *statement.orelse, *statement.finalbody,
                    *(s for h in statement.handlers for s in h.body)]
        else:
            break
    return found


def _leaves_out(finder: Finder, scaler: GradScalerInfo, test: ast.expr, holds: bool,
                event: Event) -> tuple[list[Assumption], str] | None:
    """The values of the script's variables on the branch (`test` is `holds`) when it leaves the scaler out
    (one assumption per way the scaler is None or disabled there), and the path in words; None when the branch
    may hold the scaler."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, holds = test.operand, not holds
    built_under = scaler.condition  # built only where this test has this truth value
    text = dotted(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
    none_test = _none_test(test)
    line = scaler.span.line if scaler.span is not None else 0
    if built_under is not None:
        built = finder.condition_text(*built_under)
        if (text is not None and text == scaler.text and not holds) or (
                none_test is not None and none_test[0] == scaler.text and none_test[1] == holds):
            # `if scaler:` / `if scaler is not None:` ... else, `if scaler is None:`: the test it is built under
            # does not hold there
            return (_assume(finder, built_under[0], not built_under[1], event),
                    f"`{scaler.text}` is None (line {line} builds it only when {built})")
        if _same(test, built_under[0]) and holds != built_under[1]:
            return (_assume(finder, test, holds, event),
                    f"{finder.condition_text(test, holds)}, without `{scaler.text}` (line {line} builds it only "
                    f"when {built})")
    enabled = scaler.enabled_expr
    if enabled is not None and scaler.enabled is None and _same(test, enabled) and not holds:
        # `GradScaler(enabled=use_amp)` ... the `else:` of `if use_amp:`
        return (_assume(finder, test, holds, event),
                f"{finder.condition_text(test, holds)}, where `{scaler.text}` (line {line}) is disabled")
    return None


def _none_test(test: ast.expr) -> tuple[str, bool] | None:
    """`x is None` -> ("x", True), `x is not None` -> ("x", False)."""
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
            and isinstance(test.left, (ast.Name, ast.Attribute))):
        text = dotted(test.left)
        if text is not None:
            return text, isinstance(test.ops[0], ast.Is)
    return None


def _same(one: ast.expr, other: ast.expr) -> bool:
    return ast.dump(one) == ast.dump(other)


def _assume(finder: Finder, test: ast.expr, holds: bool, event: Event) -> list[Assumption]:
    """Assumptions under which `test` has the truth value `holds`: the test itself when it is a name or an
    attribute (`args.fp16`), else each known value of a variable it reads that makes it so; [{}] (nothing
    known) when neither."""
    from precisionlint.script.values import UNKNOWN
    from precisionlint.values.assume import evaluate, known_values

    text = dotted(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
    if text is not None:
        return [{text: holds}]
    scope = finder.scope_at(test)
    for name, values in known_values(finder, test, scope):
        chosen: list[Assumption] = []
        for value in values:
            result = evaluate(finder, test, scope, {name: value})
            if result is not UNKNOWN and bool(result) == holds:
                chosen.append({name: value})
        if chosen:
            return chosen
    return [{}]


def _float16(finder: Finder, region: AutocastRegion, assumed: Assumption) -> bool:
    """The region certainly runs float16 under the assumption."""
    from precisionlint.script.values import Dtype
    from precisionlint.values.assume import evaluate

    if region.enabled is False:
        return False
    if region.enabled is not True:
        if region.enabled_expr is None or evaluate(finder, region.enabled_expr, region.scope, assumed) is not True:
            return False
    if region.dtype == "float16":
        return True
    if region.dtype_expr is not None:
        dtype = evaluate(finder, region.dtype_expr, region.scope, assumed)
        return isinstance(dtype, Dtype) and dtype.name == "float16"
    return not region.dtype_explicit and region.device == "cuda" and not region.unpacked
