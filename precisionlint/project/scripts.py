"""What a linked training script decides about precision by itself, for rules that compare it with the launcher
or config it is read with: autocast regions written as literal, unconditional choices on the training path,
the DeepSpeed engines it creates and the engine calls it wraps in `torch.autocast`.

"Hard-coded" is meant strictly: the dtype is written as a constant (`torch.float16`, `torch.bfloat16`, or omitted
with `device_type="cuda"`), `enabled` is omitted or `True`, the `with` is not one arm of a choice (`nullcontext()
if ... else autocast(...)`) and stands under no `if` of its function, and the region's outputs reach a backward
call (or a backward runs inside it). A dtype taken from a variable or an argument is a choice made at run time,
never reported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.sources.python_index import walk  # ast.walk's nodes and order, faster

if TYPE_CHECKING:
    from typing import NamedTuple

    from precisionlint.core.model import Document
    from precisionlint.script.model import AutocastRegion, RegionUse, ScriptModel
else:
    from precisionlint.core.light_typing import NamedTuple

_DTYPE_NAMES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16"}


def script_model(document: Document) -> ScriptModel:
    """The training-step model of a Python document, shared with the rules that check the document itself."""
    cached = document.script_model
    if cached is None:
        from precisionlint.script.build import build_script_model

        cached = document.script_model = build_script_model(document)
    return cached  # type: ignore[no-any-return]


def _parents(document: Document) -> dict[int, ast.AST]:
    cached = document.parents
    if cached is None:
        cached = {}
        tree = document.tree
        if isinstance(tree, ast.Module):
            for node in walk(tree):
                for child in ast.iter_child_nodes(node):
                    cached[id(child)] = node
        document.parents = cached
    return cached


def _under_if(document: Document, node: ast.AST) -> bool:
    """Some `if`, `while`, `try` handler or conditional expression of the enclosing function decides whether
    `node` runs (a flag may switch it off)."""
    parents = _parents(document)
    current = parents.get(id(node))
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(current, (ast.If, ast.IfExp, ast.While, ast.ExceptHandler, ast.Match)):
            return True
        current = parents.get(id(current))
    return False


def literal_dtype(region: AutocastRegion) -> str | None:
    """The dtype an autocast region is written with as a constant; None when it is chosen at run time."""
    if region.unpacked or len(region.possible_dtypes) > 1:
        return None
    expr = region.dtype_expr
    if expr is None:
        # dtype omitted: float16 on a device written as "cuda"
        return "float16" if region.device_explicit and region.device == "cuda" and not region.dtype_explicit \
            else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.attr in _DTYPE_NAMES:
        return _DTYPE_NAMES[expr.attr]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return _DTYPE_NAMES.get(expr.value.removeprefix("torch."))
    return None


def _literally_enabled(region: AutocastRegion) -> bool:
    expr = region.enabled_expr
    return region.enabled is True and (expr is None or (isinstance(expr, ast.Constant) and expr.value is True))


def unconditional_uses(document: Document, region: AutocastRegion) -> list[RegionUse]:
    if region.in_conditional_expression or not _literally_enabled(region):
        return []
    return [use for use in region.uses if not use.conditional and not _under_if(document, use.node)]


class HardCoded(NamedTuple):
    region: AutocastRegion
    dtype: str  # "float16" | "bfloat16"


def hard_coded_training_autocast(document: Document) -> list[HardCoded]:
    """Autocast regions on the training path whose dtype, and whether they run at all, are written as
    constants."""
    model = script_model(document)
    trained: set[int] = set()
    for event in model.backward_calls:
        trained.update(id(region) for region in event.reached)
        if event.autocast is not None:
            trained.add(id(event.autocast.region))
    found = []
    for region in model.autocast_regions:
        dtype = literal_dtype(region)
        if dtype is None or id(region) not in trained or not unconditional_uses(document, region):
            continue
        found.append(HardCoded(region, dtype))
    return found


def mentions(document: Document, names: tuple[str, ...]) -> bool:
    """The script reads one of `names` somewhere outside the `add_argument(...)` that declares it: an attribute
    (`args.bf16`), a name, or a string (`getattr(args, "bf16")`, `cfg["bf16"]`, `"--bf16"` passed on)."""
    tree = document.tree
    if not isinstance(tree, ast.Module):
        return True  # unknown: assume the script reads it
    # Asked again for every launcher that starts the script (InternVL: 84 launchers, a few scripts), and the
    # linked document is loaded once per run: the answer is kept with it.
    known = document.mentions
    if known is None:
        known = document.mentions = {}
    found = known.get(names)
    if found is None:
        found = known[names] = _mentions(tree, names)
    return found


def _mentions(tree: ast.Module, names: tuple[str, ...]) -> bool:
    nodes = walk(tree)
    declared: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            declared.update(id(arg) for arg in node.args)
    wanted = set(names) | {f"--{n}" for n in names} | {f"--{n.replace('_', '-')}" for n in names}
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in names:
            return True
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in wanted \
                and id(node) not in declared:
            return True
    return False


# --- DeepSpeed engines -----------------------------------------------------------------------------------------


class EngineCall(NamedTuple):
    call: ast.Call  # `engine(batch)` / `engine.forward(batch)`
    use: RegionUse  # the autocast it runs under
    initialize: ast.Call  # the deepspeed.initialize call that made the engine


def _function_of(document: Document, node: ast.AST) -> ast.AST | None:
    parents = _parents(document)
    current = parents.get(id(node))
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        current = parents.get(id(current))
    return current


def _engine_targets(assign: ast.Assign) -> list[str]:
    """The engine's name in `engine, optimizer, _, _ = deepspeed.initialize(...)` or `engine = ...(...)[0]`."""
    found = []
    for target in assign.targets:
        first = target.elts[0] if isinstance(target, (ast.Tuple, ast.List)) and target.elts else None
        if first is not None and isinstance(first, (ast.Name, ast.Attribute)):
            found.append(ast.unparse(first))
    return found


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements of `tree` in ast.walk's order (breadth first, fields in order), without visiting a single
    expression: an `initialize` call is bound by an assignment statement, and a file has ten times more
    expressions than statements (the whole walk was a third of checking icefall's DeepSpeed-mentioning scripts)."""
    todo: list[ast.AST] = [tree]
    while todo:
        following: list[ast.AST] = []
        for node in todo:
            yield node
            for _, value in ast.iter_fields(node):
                if isinstance(value, list) and value and isinstance(value[0], _BLOCKS):
                    following.extend(value)
        todo = following


def deepspeed_initializations(document: Document) -> Iterator[tuple[ast.Call, list[str]]]:
    """`deepspeed.initialize(...)` calls with the names their engine is bound to."""
    tree = document.tree
    text = document.text
    if not isinstance(tree, ast.Module) or "initialize" not in text:
        return
    from precisionlint.project.links import DEEPSPEED_WORDS, is_deepspeed

    if text.isascii() and re.search(DEEPSPEED_WORDS, text) is None:
        return  # no receiver is_deepspeed accepts (a name that is not ASCII may be normalised to one)

    for node in _statements(tree):
        if isinstance(node, ast.Assign):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == "initialize" and is_deepspeed(value.func):
                yield value, _engine_targets(node)
            elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call) \
                    and isinstance(value.value.func, ast.Attribute) and value.value.func.attr == "initialize" \
                    and is_deepspeed(value.value.func) and isinstance(value.slice, ast.Constant) \
                    and value.slice.value == 0:
                targets = [ast.unparse(t) for t in node.targets if isinstance(t, (ast.Name, ast.Attribute))]
                yield value.value, targets


def engine_calls_under_autocast(document: Document) -> list[EngineCall]:
    """Calls of a DeepSpeed engine (in the function that created it, or through `self.<attr>` anywhere) that run
    inside an enabled, unconditional `torch.autocast`."""
    inits = list(deepspeed_initializations(document))
    if not inits:
        return []
    model = script_model(document)
    if not model.autocast_regions:
        return []
    by_name: dict[str, list[tuple[ast.Call, ast.AST | None]]] = {}
    for call, names in inits:
        for name in names:
            by_name.setdefault(name, []).append((call, _function_of(document, call)))
    found: list[EngineCall] = []
    tree = document.tree
    assert isinstance(tree, ast.Module)
    # The statements only, in the order of a walk of every node (_statements): an expression holds none.
    for statement in _statements(tree):
        if not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)):
            continue
        use = model.statement_autocast.get(id(statement))
        if use is None or use.kind != "with" or literal_dtype(use.region) is None \
                or use not in unconditional_uses(document, use.region):
            continue
        for node in walk(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "forward":
                func = func.value
            if not isinstance(func, (ast.Name, ast.Attribute)):
                continue
            candidates = by_name.get(ast.unparse(func), [])
            if len(candidates) != 1:
                continue
            initialize, where = candidates[0]
            if not ast.unparse(func).startswith("self.") and where is not _function_of(document, statement):
                continue
            found.append(EngineCall(node, use, initialize))
    return found
