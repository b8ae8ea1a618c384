"""One traversal of a Python file's tree, shared by every pass that wants its nodes by kind.

Finding a script's framework settings used to walk the whole tree three times (imports, module constants, calls)
and once more per removable statement, each time through `ast.walk`, whose two nested generators per node cost
more than the parse itself on a large training script. The index walks the tree once, in exactly `ast.walk`'s
order (breadth first, fields in declaration order), so that every result that depends on order (the last import
of a name wins; settings come out in walk order) is the same as before. It is built on first use and kept on the
Document, so any pass (framework settings, rules) can read it without walking again.

    index = PythonIndex.of(document)
    index.import_aliases()      local name -> dotted origin, as frameworks' import_aliases() computes it
    index.module_constants()    module-level names assigned once to a literal
    index.nodes                 every node ast.walk yields, in its order, except the leaves under the fields
                                ctx, op and ops (expression contexts and operators, shared singletons)
    index.calls                 every ast.Call, in walk order
    index.statement_of(call)    the expression statement whose value the call is, if any
    index.block_of(statement)   (parent, the list the statement stands in)
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document
from precisionlint.sources.literal import literal_eval

if TYPE_CHECKING:
    from typing import Any

_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
# Fields that hold only leaves (expression contexts, operators): nothing the index collects is under them.
_LEAF_FIELDS = frozenset(("ctx", "op", "ops"))
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class PythonIndex:
    __slots__ = ("tree", "nodes", "imports", "calls", "assigned", "_statements", "_blocks", "_aliases", "_constants",
                 "_constant_names", "pruned", "_counted")

    def __init__(self, tree: ast.Module, lines: list[int] | None = None, statements: list[int] | None = None) -> None:
        """`lines`, sorted, prunes the walk for a pass that wants only the calls written on those lines (see
        `on_lines`); None walks everything. `statements`, sorted (with `lines`), prunes statements too: only those
        whose lines take in one of them are walked (the others, and `assigned`, are then incomplete)."""
        self.tree = tree
        self.nodes: list[ast.AST] = [tree]
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.calls: list[ast.Call] = []
        self.assigned: dict[str, int] = {}  # how often each plain name is assigned anywhere in the file
        self._statements: dict[int, ast.Expr] = {}  # id(call) -> its expression statement
        self._blocks: dict[int, tuple[ast.AST, list[ast.stmt]]] = {}  # id(statement) -> (parent, block)
        self._aliases: dict[str, str] | None = None
        self._constants: dict[str, Any] | None = None
        self._constant_names: set[str] | None = None
        self.pruned = lines is not None
        self._counted = statements is None  # whether `assigned` counts every assignment of the file
        self._walk(tree, lines, statements)  # (statements: the lines a walked statement must take in)

    @classmethod
    def of(cls, document: Document) -> PythonIndex:
        index = document.python_index
        if index is None:
            index = document.python_index = cls(document.tree)
        return index  # type: ignore[no-any-return]

    def _walk(self, tree: ast.AST, lines: list[int] | None, kept_lines: list[int] | None) -> None:
        # ast.walk, inlined: the same breadth-first order over the same children (ast.iter_child_nodes). The
        # nodes found are the work list, so the list is the walk's order once it is done. With `lines`, an
        # expression (and what hangs under it) whose lines take in none of them is left out; statements,
        # exception handlers and match cases are always walked.
        imports, calls, assigned = self.imports, self.calls, self.assigned
        statements, blocks = self._statements, self._blocks
        AST, Call, Expr, Import, ImportFrom, Name = ast.AST, ast.Call, ast.Expr, ast.Import, ast.ImportFrom, ast.Name
        children = _CHILD_FIELDS
        prune = lines is not None
        blocks_kinds = (ast.stmt, ast.excepthandler)
        count = len(lines) if lines is not None else 0
        kept: list[int] = kept_lines if kept_lines is not None else []
        kept_count = len(kept)

        def wanted(node: ast.AST) -> bool:
            if isinstance(node, blocks_kinds):
                if kept_lines is None:
                    return True
                first: int = node.lineno  # type: ignore[attr-defined]
                decorators = getattr(node, "decorator_list", None)
                if decorators:
                    first = min(first, *(d.lineno for d in decorators))  # decorators stand above the `def`
                position = bisect_left(kept, first)
                return position < kept_count and kept[position] <= (node.end_lineno or first)  # type: ignore[attr-defined]
            start = getattr(node, "lineno", None)
            if start is None:
                return True  # arguments, comprehensions, with-items, match cases: no lines of their own
            position = bisect_left(lines, start)  # type: ignore[arg-type]
            return position < count and lines[position] <= (node.end_lineno or start)  # type: ignore[attr-defined,index]

        found = self.nodes
        append = found.append
        position = 0
        while position < len(found):
            node = found[position]
            position += 1
            kind = type(node)
            if kind is Call:
                calls.append(node)  # type: ignore[arg-type]
            elif kind is Expr:
                statements[id(node.value)] = node  # type: ignore[attr-defined,assignment]
            elif kind is Import or kind is ImportFrom:
                imports.append(node)  # type: ignore[arg-type]
            elif kind in _ASSIGNS:
                targets: list[ast.expr] = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
                for target in targets:
                    if type(target) is Name:
                        assigned[target.id] = assigned.get(target.id, 0) + 1
            fields = children.get(kind)
            if fields is None:
                fields = children[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
            for field in fields:
                try:
                    value = getattr(node, field)
                except AttributeError:
                    continue
                if isinstance(value, AST):
                    if not prune or wanted(value):
                        append(value)
                elif isinstance(value, list):
                    if field in _BLOCK_FIELDS:
                        for item in value:
                            blocks.setdefault(id(item), (node, value))
                    for item in value:
                        if isinstance(item, AST) and (not prune or wanted(item)):
                            append(item)

    @classmethod
    def on_lines(cls, document: Document, lines: list[int]) -> PythonIndex:
        """The document's index for a pass that wants only the calls written on `lines` (sorted, 1-based): every
        statement is walked (imports, assignments, blocks and expression statements are complete), but an
        expression is walked only when its lines take in one of `lines`. The calls found are those of the whole
        walk on those lines, in the whole walk's order: a breadth-first walk that leaves whole subtrees out
        keeps the order of the rest. A statement is walked only when its lines take in one of `lines` or an
        import (so that every import is found, and every statement around the calls); `assigned` is then
        incomplete, and module_constants() counts the assignments itself. The whole index, when another pass
        built it already, serves as it is, and so does the pruned index of the same lines (kept on the document
        for the next pass that asks)."""
        index = document.python_index
        if index is not None:
            return index  # type: ignore[no-any-return]
        kept = document.python_index_on_lines
        if kept is not None and kept[0] == lines:
            return kept[1]  # type: ignore[no-any-return]
        index = cls(document.tree, lines, statements=_statement_lines(document.text, lines))
        document.python_index_on_lines = (lines, index)
        return index

    def import_aliases(self) -> dict[str, str]:
        """Local name -> dotted origin for the module's imports (top level and inside functions); where a name
        is imported twice, the later in walk order wins."""
        if self._aliases is None:
            self._aliases = aliases_of(self.imports)
        return self._aliases

    def module_constant_names(self) -> set[str]:
        """The names module_constants() may hold: those a module-level statement assigns alone (`NAME = ...`).
        A pass looks a name up here before it asks for the constants, which count every assignment of the file:
        `Trainer(precision=precision)` inside a test function names no module constant."""
        if self._constant_names is None:
            self._constant_names = {node.targets[0].id for node in self.tree.body  # type: ignore[attr-defined]
                                    if type(node) is ast.Assign and len(node.targets) == 1
                                    and type(node.targets[0]) is ast.Name}
        return self._constant_names

    def module_constants(self) -> dict[str, Any]:
        """Module-level names assigned exactly once in the whole file, to a literal (PRECISION = "16-mixed")."""
        if self._constants is None:
            values: dict[str, Any] = {}
            assigned = self.assigned if self._counted else _assignments(self.tree)
            for node in self.tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    name = node.targets[0].id
                    if assigned.get(name) == 1:
                        try:
                            values[name] = literal_eval(node.value)
                        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                            pass
            self._constants = values
        return self._constants

    def statement_of(self, call: ast.Call) -> ast.Expr | None:
        return self._statements.get(id(call))

    def block_of(self, statement: ast.stmt) -> tuple[ast.AST, list[ast.stmt]] | None:
        return self._blocks.get(id(statement))


def lines_of(text: str, offsets: list[int]) -> list[int]:
    """The lines (1-based, sorted, each once) of sorted character offsets, counting `\n` as the parser counts
    lines in text without a carriage return."""
    lines: list[int] = []
    line, counted = 1, 0
    for offset in offsets:
        line += text.count("\n", counted, offset)
        counted = offset
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def lines_holding(text: str, words: tuple[str, ...], pattern: re.Pattern[str] | None = None) -> list[int] | None:
    """The lines (1-based, sorted) where one of `words` is written (as a substring) or `pattern` matches (the
    line it starts on): a statement that takes in none of them has none of those words in its text. None when
    lines cannot be counted from the text as the parser counts them (not ASCII: the parser normalises
    identifiers; a carriage return)."""
    if not text.isascii() or "\r" in text:
        return None
    offsets: list[int] = []
    for word in words:
        start = text.find(word)
        while start != -1:
            offsets.append(start)
            start = text.find(word, start + len(word))
    if pattern is not None:
        offsets.extend(match.start() for match in pattern.finditer(text))
    return lines_of(text, sorted(offsets))


def takes_in(statement: ast.stmt, lines: list[int]) -> bool:
    """Whether the statement's lines (its decorators' too) take in one of `lines` (sorted)."""
    first: int = statement.lineno
    decorators = getattr(statement, "decorator_list", None)
    if decorators:
        first = min(first, *(d.lineno for d in decorators))  # decorators stand above the `def`
    position = bisect_left(lines, first)
    return position < len(lines) and lines[position] <= (statement.end_lineno or first)


def walk_on_lines(node: ast.AST, lines: list[int] | None) -> list[ast.AST]:
    """walk(node) without the statements whose lines take in none of `lines` (and all under them): the nodes
    left are in walk's order. None walks everything. For a pass that wants only nodes written on those lines."""
    if lines is None:
        return walk(node)
    found = [node]
    AST, stmt = ast.AST, ast.stmt
    fields_of = _ALL_FIELDS
    index = 0
    while index < len(found):
        current = found[index]
        index += 1
        kind = type(current)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = kind._fields
        for field in fields:
            try:
                value = getattr(current, field)
            except AttributeError:
                continue
            if isinstance(value, AST):
                if not isinstance(value, stmt) or takes_in(value, lines):
                    found.append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, AST) and (not isinstance(item, stmt) or takes_in(item, lines)):
                        found.append(item)
    return found


def _statement_lines(text: str, lines: list[int]) -> list[int]:
    """`lines` and the lines where `import` is written (ASCII text without a carriage return, as for `lines`): a
    statement that takes in none of them holds no import and none of the calls on `lines`."""
    imports: list[int] = []
    start = text.find("import")
    while start != -1:
        imports.append(start)
        start = text.find("import", start + 6)
    return sorted(set(lines).union(lines_of(text, imports)))


def all_statements(tree: ast.AST, lines: list[int] | None = None) -> list[ast.stmt]:
    """Every statement under `tree`, nested ones too (bodies, branches, handlers, match cases), without walking
    any expression: no statement is inside one (a lambda's body is an expression). Depth first, last first.
    With `lines` (sorted), only the statements whose lines (decorators' too) take in one of them: a statement
    that takes in none is not descended into (nothing inside it can)."""
    found: list[ast.stmt] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if type(block) is list:  # a lambda's or a conditional expression's body is an expression
                if lines is not None:  # handlers and match cases stay: their bodies are checked in turn
                    block = [item for item in block if not isinstance(item, ast.stmt) or takes_in(item, lines)]
                if field in _BLOCK_FIELDS:
                    found.extend(block)  # handlers and match cases are not statements; their bodies are
                stack.extend(block)
    return found


def _assignments(tree: ast.AST) -> dict[str, int]:
    """How often each plain name is assigned anywhere in the file, as the whole walk counts it."""
    assigned: dict[str, int] = {}
    for child in all_statements(tree):
        kind = type(child)
        if kind in _ASSIGNS:
            targets: list[ast.expr] = child.targets if kind is ast.Assign else [child.target]  # type: ignore[attr-defined]
            for target in targets:
                if type(target) is ast.Name:
                    assigned[target.id] = assigned.get(target.id, 0) + 1  # type: ignore[attr-defined]
    return assigned


def aliases_of(imports: list[ast.Import | ast.ImportFrom]) -> dict[str, str]:
    """Local name -> dotted origin of these import statements; where a name is imported twice, the later wins
    (PythonIndex.import_aliases gives them in walk order)."""
    aliases: dict[str, str] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


_ALL_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(node: ast.AST) -> list[ast.AST]:
    """The nodes `ast.walk(node)` yields, in its order (breadth first, fields in declaration order), as a list:
    without the two generators per node of ast.walk and ast.iter_child_nodes, which cost more than the work
    most callers do per node. For reading a tree, not for changing it while walking."""
    found = [node]
    AST = ast.AST
    fields_of = _ALL_FIELDS
    index = 0
    while index < len(found):
        current = found[index]
        index += 1
        kind = type(current)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = kind._fields
        for field in fields:
            try:
                value = getattr(current, field)
            except AttributeError:
                continue
            if isinstance(value, AST):
                found.append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        found.append(item)
    return found


class FastNodeVisitor(ast.NodeVisitor):
    """ast.NodeVisitor, with the same visiting order and the same dispatch to visit_<Class> methods, at a
    fraction of its overhead, which dominates the script model's passes over a large training script:
    the method for each node class is looked up once per visitor class (not by building its name and a getattr
    per node), and generic_visit reads the fields without ast.iter_fields' generators."""

    _dispatch: dict[type, Any] = {}
    _children: dict[type, tuple[str, ...]] = {}
    _leaves: frozenset[str] = frozenset()
    # Node classes that generic_visit does not visit at all: no method of this visitor looks at them and they
    # hold no node but leaves (a constant, a name, an import alias: a third of a tree's nodes). Only for a
    # visitor whose visit() is the plain dispatch (or that says `dispatch_only = True`: its own visit() does
    # nothing more for expressions), since visit() is not called for them.
    _inert: frozenset[type] = frozenset()
    # When set, generic_visit visits a Name only when its id is one of these: for a visitor whose visit_Name
    # does nothing for any other name (the script model's collector looks only for deprecated imports' names).
    _names: frozenset[str] | None = None
    dispatch_only = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}
        cls._children = {}
        # Fields that hold only leaf nodes no method of this visitor looks at: expression contexts (one Load or
        # Store under every name, attribute and subscript: a fifth of a tree's nodes) and operators.
        leaves = set()
        if not any(hasattr(cls, f"visit_{kind.__name__}") for kind in subclasses_of(ast.expr_context)):
            leaves.add("ctx")
        operators = (ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
        if not any(hasattr(cls, f"visit_{kind.__name__}") for base in operators for kind in subclasses_of(base)):
            leaves.update(("op", "ops"))
        cls._leaves = frozenset(leaves)
        inert: set[type] = set()
        if cls.dispatch_only or cls.visit is FastNodeVisitor.visit:
            for kind in (ast.Constant, ast.alias, ast.Name):
                if kind is ast.Name and "ctx" not in leaves:
                    continue
                if cls._method_for(kind) is cls.generic_visit:
                    inert.add(kind)
        cls._inert = frozenset(inert)

    def visit(self, node: ast.AST) -> Any:
        kind = type(node)
        method = self._dispatch.get(kind)
        if method is None:
            method = self._dispatch[kind] = self._method_for(kind)
        return method(self, node)

    @classmethod
    def _method_for(cls, kind: type) -> Any:
        method = getattr(cls, "visit_" + kind.__name__, None)
        if method is None:
            return cls.generic_visit
        if method is ast.NodeVisitor.visit_Constant and not any(  # type: ignore[attr-defined]
            hasattr(cls, legacy) for legacy in ("visit_Num", "visit_Str", "visit_Bytes", "visit_NameConstant")
        ):
            return cls.generic_visit  # the base's only job there is to call those deprecated methods
        return method

    def generic_visit(self, node: ast.AST) -> None:
        visit = self.visit
        AST = ast.AST
        inert = self._inert
        names = self._names
        kind = type(node)
        fields = self._children.get(kind)
        if fields is None:
            fields = self._children[kind] = tuple(f for f in kind._fields if f not in self._leaves)
        for field in fields:
            try:
                value = getattr(node, field)
            except AttributeError:
                continue
            if type(value) is list:
                for item in value:
                    if type(item) not in inert and isinstance(item, AST):
                        if names is not None and type(item) is ast.Name and item.id not in names:  # type: ignore[attr-defined]
                            continue
                        visit(item)
            elif type(value) not in inert and isinstance(value, AST):
                if names is not None and type(value) is ast.Name and value.id not in names:
                    continue
                visit(value)


def subclasses_of(base: type) -> list[type]:
    found: list[type] = []
    kind: type
    for kind in base.__subclasses__():
        found.append(kind)
        found.extend(subclasses_of(kind))
    return found
