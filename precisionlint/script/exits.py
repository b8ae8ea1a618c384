"""Half casts on a path that leaves the function before any optimizer could step the cast weights.

The casts of the training-step model are flow-insensitive: `model.half()` anywhere in a function counts for
every optimizer over `model`. A common shape is a branch for inference or export that casts and returns:

    optimizer = torch.optim.SGD(model.parameters())
    if FLAGS.mode == "inference_benchmark":
        model = model.half()          # pure fp16 for inference
        benchmark(model)
        return
    train(model, optimizer)           # float32 weights: the cast above never reaches this line

(NVIDIA DeepLearningExamples, DLRM's main.py.) `Module.half()` converts the parameters in place, so the order
of construction and cast does not matter; what matters is whether a step can follow the cast. When the cast
lies in an `if` branch that ends by leaving the function (`return`, `raise`, `sys.exit(...)`), every statement
the cast can reach is in that branch; if the branch neither steps nor backpropagates nor names the optimizer
(passing it on to a helper that could step it), no step of that optimizer follows the cast.
"""

from __future__ import annotations

import ast

_EXIT_CALLS = frozenset({"exit", "quit", "_exit"})  # sys.exit, exit(), quit(), os._exit
_STEP_ATTRS = frozenset({"step", "backward"})


class ExitBranch:
    """The innermost `if` branch around a cast that ends by leaving the function, summarised."""

    __slots__ = ("first", "last", "names", "steps")

    def __init__(self, block: list[ast.stmt]) -> None:
        self.first = block[0].lineno
        self.last = block[-1].end_lineno or block[-1].lineno
        names: set[str] = set()
        steps = False
        for statement in block:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name):
                    names.add(node.id)
                elif isinstance(node, ast.Attribute):
                    names.add(node.attr)
                    if node.attr in _STEP_ATTRS:
                        steps = True
        self.names = frozenset(names)
        self.steps = steps


def exit_branch(function: ast.AST, line: int, cache: dict[tuple[int, int], ExitBranch | None]) -> ExitBranch | None:
    """The innermost branch of `function` that holds `line` and ends by leaving the function, or None."""
    key = (id(function), line)
    if key not in cache:
        cache[key] = _find(function, line)
    return cache[key]


def steps_after(function: ast.AST, line: int, optimizer_line: int, optimizer_name: str | None,
                cache: dict[tuple[int, int], ExitBranch | None]) -> bool:
    """Whether an optimizer built on `optimizer_line` and bound to `optimizer_name` (None when not bound to a
    name) could step the weights a cast on `line` of `function` converts, as far as that function shows."""
    branch = exit_branch(function, line, cache)
    if branch is None or branch.steps or optimizer_name is None:
        return True
    if branch.first <= optimizer_line <= branch.last:
        return True  # built inside the branch, after or before the cast: the branch is where it trains
    return optimizer_name in branch.names


def _find(function: ast.AST, line: int) -> ExitBranch | None:
    best: list[ast.stmt] | None = None
    stack: list[ast.AST] = [function]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if not _holds(child, line):
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue  # another scope: its own casts are its own
            if isinstance(child, ast.If):
                for block in (child.body, child.orelse):
                    if block and _block_holds(block, line) and _leaves(block[-1]):
                        best = block  # deeper branches are found later and win
            stack.append(child)
    return ExitBranch(best) if best is not None else None


def _holds(node: ast.AST, line: int) -> bool:
    start = getattr(node, "lineno", None)
    if start is None:
        return True  # an expression context, arguments: no position of its own; look inside
    end = getattr(node, "end_lineno", None) or start
    return bool(start <= line <= end)


def _block_holds(block: list[ast.stmt], line: int) -> bool:
    return block[0].lineno <= line <= (block[-1].end_lineno or block[-1].lineno)


def _leaves(statement: ast.stmt) -> bool:
    if isinstance(statement, (ast.Return, ast.Raise)):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in _EXIT_CALLS
    return False
