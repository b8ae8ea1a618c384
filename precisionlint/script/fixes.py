"""Token-level edits for the script rules' fixes.

Every edit replaces or inserts text at exact character offsets of the document; nothing is re-printed, so
comments, quotes, line breaks and the user's formatting survive. A helper returns None when the source is
not in a shape it can edit with certainty (a comment between a name and its parenthesis, `*args` where
positions matter); the rule then reports without a fix.
"""

from __future__ import annotations

import ast
import re

from precisionlint.core.model import Edit
from precisionlint.core.patterns import lazy_pattern
from precisionlint.core.records import FrozenRecord
from precisionlint.script.model import DeprecatedImport, DeprecatedUse, ScriptModel
from precisionlint.script.names import DEPRECATED_MODULES, Deprecated, dotted
from precisionlint.script.positions import Positions
from precisionlint.script.scopes import Scope
from precisionlint.sources.python_index import walk

# The positional parameters of the deprecated autocast spellings, which torch.amp.autocast takes after device_type
# in another order (device_type, dtype, enabled, cache_enabled): they become keywords.
_LEGACY_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")
_MODULE_IN_IMPORT = lazy_pattern(globals(), "_MODULE_IN_IMPORT", r"from\s+(torch\s*\.\s*(?:cuda|cpu)\s*\.\s*amp)\b")


def open_paren(text: str, position: int) -> int | None:
    """Offset of the `(` that opens a call whose callee ends at `position` (whitespace may sit between)."""
    index = position
    while index < len(text) and text[index] in " \t":
        index += 1
    return index if index < len(text) and text[index] == "(" else None


def _arguments(call: ast.Call) -> list[ast.AST]:
    return sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]


def insert_first_argument(positions: Positions, call: ast.Call, argument: str) -> Edit | None:
    """`f(a, b=1)` -> `f(<argument>, a, b=1)`; `f()` -> `f(<argument>)`."""
    arguments = _arguments(call)
    if arguments:
        return Edit(positions.start(arguments[0]), positions.start(arguments[0]), f"{argument}, ")
    paren = open_paren(positions.text, positions.end(call.func))
    if paren is None:
        return None
    return Edit(paren + 1, paren + 1, argument)


def add_keyword(positions: Positions, call: ast.Call, keyword: str) -> Edit | None:
    """Add `keyword` (`name=value`) where a keyword may stand: after the last positional argument, or first."""
    if call.args:
        end = positions.end(call.args[-1])
        return Edit(end, end, f", {keyword}")
    return insert_first_argument(positions, call, keyword)


# What the deprecated autocast spellings default `dtype` to. torch.amp.autocast(device) instead takes the autocast
# dtype current when it is built (`torch.get_autocast_dtype(device)`): inside an outer bfloat16 region, or after
# `torch.set_autocast_dtype`, `torch.amp.autocast("cuda")` is bfloat16 where `torch.cuda.amp.autocast()` was
# float16. The rewrite writes the old default out so that it cannot change which dtype runs.
_LEGACY_AUTOCAST_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}


class AmpEdits(FrozenRecord):
    """The edits that move one deprecated spelling to torch.amp; `inexact` says why they may not behave the same
    (then the fix is offered as unsafe), empty when they cannot change behaviour."""

    # A plain class rather than a dataclass: importing dataclasses costs every check run's workers several
    # milliseconds (precisionlint/core/records.py has the numbers).
    __slots__ = ("edits", "inexact")
    _fields = __slots__

    def __init__(self, edits: list[Edit], inexact: str = "") -> None:
        self.edits = edits
        self.inexact = inexact


def deprecated_call_edits(
    positions: Positions, call: ast.Call, deprecated: Deprecated, torch: str | None
) -> AmpEdits | None:
    """Arguments for the torch.amp twin of a deprecated call (the callee itself is edited elsewhere). `torch` is
    the name bound to the torch package, needed to write an autocast's default dtype out (None: no fix)."""
    device = f'"{deprecated.device}"'
    if deprecated.kind in ("custom_fwd", "custom_bwd"):
        edit = add_keyword(positions, call, f"device_type={device}")
        return AmpEdits([edit]) if edit is not None else None
    edits: list[Edit] = []
    inexact = ""
    if deprecated.kind == "autocast":
        # torch.cuda.amp.autocast(enabled, dtype, cache_enabled): name them, since device_type comes first now
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred) or index >= len(_LEGACY_AUTOCAST_POSITIONAL):
                return None
            start = positions.start(argument)
            edits.append(Edit(start, start, f"{_LEGACY_AUTOCAST_POSITIONAL[index]}="))
        has_dtype = len(call.args) >= 2 or any(k.arg == "dtype" for k in call.keywords)
        if not has_dtype:
            if any(k.arg is None for k in call.keywords):
                # `autocast(**kwargs)`: a dtype in kwargs would clash with one written out, and without one the
                # new spelling takes the current autocast dtype
                inexact = (f"unless the unpacked arguments name a dtype, torch.amp.autocast takes the current "
                           f"autocast dtype where this call defaulted to {_LEGACY_AUTOCAST_DTYPE[deprecated.device]}")
            else:
                if torch is None:
                    return None
                written = f"dtype={torch}.{_LEGACY_AUTOCAST_DTYPE[deprecated.device]}"
                arguments = _arguments(call)
                if arguments:
                    end = positions.end(arguments[-1])
                    edits.append(Edit(end, end, f", {written}"))
                else:
                    paren = open_paren(positions.text, positions.end(call.func))
                    if paren is None:
                        return None
                    return AmpEdits([Edit(paren + 1, paren + 1, f"{device}, {written}")])
    elif any(isinstance(a, ast.Starred) for a in call.args):
        return None  # GradScaler(*args): device would shift them; positions unknown
    first = insert_first_argument(positions, call, device)
    if first is None:
        return None
    if edits and edits[0].start == first.start:
        # one insertion at the first argument: `("cuda", enabled=` rather than two edits at one offset
        return AmpEdits([Edit(first.start, first.end, first.replacement + edits[0].replacement), *edits[1:]], inexact)
    return AmpEdits([first, *edits], inexact)


def _use_edits(
    positions: Positions,
    deprecated: Deprecated,
    call: ast.Call | None,
    bare_decorator: bool,
    callee: ast.expr,
    torch: str | None,
) -> AmpEdits | None:
    """Edits a use needs beyond renaming its callee: arguments, or parentheses for a bare decorator."""
    if call is not None and call.func is callee:
        return deprecated_call_edits(positions, call, deprecated, torch)
    if bare_decorator and deprecated.kind in ("custom_fwd", "custom_bwd"):
        end = positions.end(callee)
        return AmpEdits([Edit(end, end, f'(device_type="{deprecated.device}")')])
    if deprecated.kind == "scaler":
        # `isinstance(x, GradScaler)`: the torch.amp class is the base class, nothing else to change
        return AmpEdits([])
    return None  # `ctx = torch.cuda.amp.autocast`: the call, wherever it is, would need the device too


def torch_name(model: ScriptModel) -> str | None:
    """A name bound to the torch package in this file (`torch`, or `th` after `import torch as th`)."""
    for name, bindings in model.table.imports.bindings.items():
        if any(b.qualname == "torch" for b in bindings) and model.table.imports.resolve_name(name) == "torch":
            return name
    return None


def deprecated_use_fix(model: ScriptModel, use: DeprecatedUse) -> AmpEdits | None:
    positions = model.positions
    base = use.node.value
    written = dotted(base)
    if written is None or positions.segment(base) != written:
        return None  # a comment or line break inside the chain: leave it to the author
    # What re.fullmatch(r"(\w+)\.(?:cuda|cpu)\.amp", written) matches, without compiling it at every start.
    head, _, tail = written.partition(".")
    root: str | None
    if tail in ("cuda.amp", "cpu.amp") and head and all(character.isalnum() or character == "_" for character in head):
        root = head  # `th.cuda.amp.autocast()`: `th` names torch here
        new_base = f"{root}.amp"
    else:
        # `from torch.cuda import amp; amp.autocast()`: spell it through the torch package instead
        root = torch_name(model)
        if root is None or model.resolver.qualname(base, use.scope or model.table.module) not in DEPRECATED_MODULES:
            return None
        new_base = f"{root}.amp"
    rest = _use_edits(positions, use.deprecated, use.call, use.bare_decorator, use.node, root)
    if rest is None:
        return None
    return AmpEdits([Edit(positions.start(base), positions.end(base), new_base), *rest.edits], rest.inexact)


def deprecated_import_fix(model: ScriptModel, record: DeprecatedImport) -> AmpEdits | None:
    """`from torch.cuda.amp import autocast as ac, GradScaler` -> `from torch.amp import ...` plus the device
    argument at every call of the imported names (aliases keep working: only the module and arguments change)."""
    if record.module not in DEPRECATED_MODULES:
        return None
    if any(d is None or alias.name not in DEPRECATED_MODULES[record.module] for alias, d in record.names):
        return None
    positions = model.positions
    start, end = positions.start(record.node), positions.end(record.node)
    statement = positions.text[start:end]
    match = _MODULE_IN_IMPORT.match(statement)
    if match is None:
        return None
    edits = [Edit(start + match.start(1), start + match.end(1), "torch.amp")]
    inexact: list[str] = []
    torch = torch_name(model)
    for alias, deprecated in record.names:
        assert deprecated is not None
        for use in record.uses.get(alias.asname or alias.name, []):
            extra = _use_edits(positions, deprecated, use.call, use.bare_decorator, use.node, torch)
            if extra is None:
                return None
            edits += extra.edits
            if extra.inexact:
                inexact.append(extra.inexact)
    return AmpEdits(edits, inexact[0] if inexact else "")


def newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def insert_line_before(positions: Positions, statement: ast.stmt, line: str) -> Edit | None:
    """Insert `line` (without indentation) on its own line before `statement`, indented like it.
    None when the statement does not start its line (`if x: clip(...)`, `a; clip(...)`)."""
    prefix = positions.line_text(statement.lineno)[: positions.column(statement.lineno, statement.col_offset)]
    if prefix.strip():
        return None
    line_start = positions.offset(statement.lineno, 0)
    return Edit(line_start, line_start, f"{prefix}{line}{newline(positions.text)}")


# -- checking a fix before it is offered ----------------------------------------------------------------------


def apply_edits(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """`text` with `edits` applied in one pass (thousands of edits stay linear). ValueError when two overlap."""
    pieces: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < cursor:
            raise ValueError("overlapping edits")
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.replacement)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def parses_after(model: ScriptModel, edits: tuple[Edit, ...] | list[Edit]) -> bool:
    """The file still parses once `edits` are applied: a fix never leaves a broken file behind."""
    try:
        if _parses_in_place(model, edits):
            return True  # shown on the edited statements alone (see there); else the whole file decides
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        ast.parse(apply_edits(model.positions.text, edits))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_BLOCKS = ("body", "orelse", "finalbody")
# Statements that hold blocks: an edit in their header is checked with the whole file.
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Match, getattr(ast, "TryStar", ast.Try))


def _parses_in_place(model: ScriptModel, edits: tuple[Edit, ...] | list[Edit]) -> bool:
    """True when the file is sure to parse after `edits` without parsing all of it (a large file costs as much
    to parse again as to analyse). The file parses now; so it still does when each edit either

    - lies inside one simple statement (an assignment, a call, an import; not a block's header), and that
      statement's text with its edits parses alone, starting at its first character and ending at its last,
      as simple statements on the statement's first line: the tokens before and after it are untouched and
      it ends where the old one did, outside any bracket or string; or
    - inserts one whole line before a statement that starts its line (and not after a backslash
      continuation), indented like it, whose text parses alone as simple statements.

    False means "not shown": the caller parses the whole file."""
    positions = model.positions
    text = positions.text
    tree = model.document.tree
    if not isinstance(tree, ast.Module) or "\r" in text:
        return False
    groups: dict[int, tuple[ast.stmt, list[Edit]]] = {}
    for edit in edits:
        if edit.start == edit.end and edit.replacement.endswith("\n") and _inserts_line(positions, tree, edit):
            continue
        statement = _statement_around(positions, tree.body, edit.start, edit.end)
        if statement is None:
            return False
        groups.setdefault(id(statement), (statement, []))[1].append(edit)
    for statement, own in groups.values():
        start = positions.start(statement)
        moved = [Edit(e.start - start, e.end - start, e.replacement) for e in own]
        if isinstance(statement, _COMPOUND):
            if not _header_alone(positions, statement, own, moved):
                return False
        elif not _simple_alone(apply_edits(text[start : positions.end(statement)], moved)):
            return False
    return True


def _header_alone(positions: Positions, statement: ast.stmt, edits: list[Edit], moved: list[Edit]) -> bool:
    """Edits inside the expressions of a block's header (`with torch.cuda.amp.autocast():`, an `if` test): the
    header up to its first body statement, edited, parses alone with `pass` as its body, as one statement of
    the same kind. Each edit must lie inside one expression of the header, never on its colon, line break or
    the body's indentation."""
    if not isinstance(statement, (ast.With, ast.AsyncWith, ast.If, ast.While, ast.For, ast.AsyncFor)):
        return False
    parts: list[ast.AST] = [statement.test] if isinstance(statement, (ast.If, ast.While)) else []
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        parts = [statement.target, statement.iter]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        parts = [node for item in statement.items for node in (item.context_expr, item.optional_vars) if node]
    spans = [(positions.start(node), positions.end(node)) for node in parts]
    if not all(any(a <= e.start and e.end <= b for a, b in spans) for e in edits):
        return False
    start = positions.start(statement)
    header = positions.text[start : positions.start(statement.body[0])]
    segment = apply_edits(header, moved).rstrip(" \t") + " pass"
    if "\r" in segment:
        return False
    body = ast.parse(segment).body
    return (len(body) == 1 and type(body[0]) is type(statement) and body[0].col_offset == 0
            and len(body[0].body) == 1 and isinstance(body[0].body[0], ast.Pass)
            and not getattr(body[0], "orelse", None))


def _simple_alone(segment: str) -> bool:
    """`segment` parses as simple statements that start on its first line at its first character and end at
    its last character (no line break, comment or continuation after them)."""
    if "\r" in segment:
        return False
    body = ast.parse(segment).body
    if not body or any(isinstance(node, _COMPOUND) for node in body):
        return False
    if body[0].col_offset != 0 or any(node.lineno != 1 for node in body):
        return False
    last = body[-1]
    last_line = segment.rsplit("\n", 1)[-1]
    return last.end_lineno == segment.count("\n") + 1 and last.end_col_offset == len(last_line.encode("utf-8"))


def _inserts_line(positions: Positions, tree: ast.Module, edit: Edit) -> bool:
    text = positions.text
    line = edit.replacement[:-1]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if "\n" in line or (edit.start > 0 and text[edit.start - 1] != "\n"):
        return False
    if text[edit.start : edit.start + len(indent)] != indent:
        return False
    where = edit.start + len(indent)
    statement = _statement_around(positions, tree.body, where, where, compound=True)
    if statement is None or positions.start(statement) != where or getattr(statement, "decorator_list", None):
        return False  # (a decorated definition starts at its first decorator, which the line would follow)
    if re.match(r"elif\b", text[where : where + 5]):
        return False  # an `elif` branch is an If that starts at its keyword: no line may come before it
    before = text[: edit.start - 1] if edit.start > 0 else ""
    if before.endswith("\\"):
        return False  # the line continues the one above: an inserted line would split that statement
    return _simple_alone(line[len(indent):])


def _statement_around(
    positions: Positions, body: list[ast.stmt], start: int, end: int, compound: bool = False
) -> ast.stmt | None:
    """The innermost simple statement whose text holds [start, end) (with `compound`, also a block statement
    that starts exactly at `start`); None when the range is in a block's header, between statements or
    across several."""
    while body:
        low, high = 0, len(body)
        while low < high:  # the last statement that starts at or before `start`
            middle = (low + high) // 2
            if positions.start(body[middle]) <= start:
                low = middle + 1
            else:
                high = middle
        if low == 0:
            return None
        statement = body[low - 1]
        if positions.end(statement) < end:
            return None
        if not isinstance(statement, _COMPOUND):
            return statement
        if compound and positions.start(statement) == start:
            return statement
        blocks: list[list[ast.stmt]] = [getattr(statement, field, None) or [] for field in _BLOCKS]
        blocks += [handler.body for handler in getattr(statement, "handlers", [])]
        blocks += [case.body for case in getattr(statement, "cases", [])]
        for block in blocks:
            if block and positions.start(block[0]) <= start and end <= positions.end(block[-1]):
                body = block
                break
        else:
            own: list[ast.stmt] = getattr(statement, "body", None) or []
            if not compound and own and end <= positions.start(own[0]):
                return statement  # in the header (_header_alone decides)
            return None
    return None


def bound_at(model: ScriptModel, expr_text: str, scope: Scope, statement: ast.stmt) -> bool:
    """Whether every name the expression `expr_text` (`scaler`, `self.scaler`, `opts[0]`) reads is bound when
    `statement` runs in `scope`: a parameter, a name bound in an enclosing scope or imported, a local assigned
    on a line before the statement, or a name bound nowhere in the file (a builtin, a star import). Not bound: a
    local assigned only further down, a loop variable of a later loop.

    `self.attr` counts as bound unless every assignment of it is in this function below the statement: an
    attribute set nowhere in the file comes from a base class or the caller."""
    try:
        expr = ast.parse(expr_text, mode="eval").body
    except SyntaxError:
        return False
    table = model.table
    for node in walk(expr):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            cls = model.resolver.self_class(scope, node.value.id)
            assigned = cls.attrs.get(node.attr, []) if cls is not None else []
            if assigned and all(owner is scope for _, owner in assigned):
                if not _assigned_before(scope.node, node.attr, statement, attribute_of=node.value.id):
                    return False
        if not isinstance(node, ast.Name):
            continue
        owner = table.lookup(scope, node.id)
        if owner is None:
            continue  # bound nowhere in the file (a builtin, a star import): the program's own step reads it too
        if owner is not scope or node.id in scope.params:
            continue  # a parameter, or bound outside this function (a global, a closure variable)
        if not _assigned_before(scope.node, node.id, statement):
            return False
    return True


def _assigned_before(function: ast.AST, name: str, statement: ast.stmt, attribute_of: str | None = None) -> bool:
    """`name` (or `<attribute_of>.name`) is stored somewhere in `function` before `statement` (not only inside a
    nested function)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if attribute_of is None:
            stored = isinstance(node, ast.Name) and node.id == name
        else:
            stored = (
                isinstance(node, ast.Attribute)
                and node.attr == name
                and isinstance(node.value, ast.Name)
                and node.value.id == attribute_of
            )
        if stored and isinstance(getattr(node, "ctx", None), ast.Store):
            if (node.lineno, node.col_offset) < (statement.lineno, statement.col_offset):  # type: ignore[attr-defined]
                return True
        stack.extend(ast.iter_child_nodes(node))
    return False
