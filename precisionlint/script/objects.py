"""Objects through the code: the keys under which one object of the script (a model, an optimizer, a scaler) is
known in different functions of the file.

The training-step model keys an object by where it is named: "<function>:model" for a variable, "<Class>.self.model"
for an attribute. A model cast to float16 at the module level and handed to `Trainer(model)`, whose `__init__`
stores it as `self.model` and builds the optimizer over `self.model.parameters()`, is one object under three
keys. ObjectAliases joins them: a parameter with the arguments the file's calls pass it (a function of the file,
or a class's `__init__`), an attribute with the parameter or variable stored in it (`self.model = model`), and a
name assigned another name once (`net = model`). Built once per model, only when a rule asks about two keys
that are not the same object by name.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from precisionlint.script.scopes import Scope, ScopeTable, is_import_marker, scoped_nodes

if TYPE_CHECKING:
    from precisionlint.script.values import Resolver


def split_root(key: str) -> tuple[str, str]:
    """("<scope>:model", ".encoder") for "<scope>:model.encoder"; ("C.self.model", ".encoder") for
    "C.self.model.encoder"."""
    if ".self." in key and ":" not in key:
        head, _, rest = key.partition(".self.")
        first, dot, more = rest.partition(".")
        return f"{head}.self.{first}", dot + more
    head, colon, text = key.partition(":")
    first, dot, more = text.partition(".")
    return f"{head}{colon}{first}", dot + more


class ObjectAliases:
    def __init__(self, tree: ast.AST, table: ScopeTable, resolver: Resolver) -> None:
        self.parent: dict[str, str] = {}
        self.table, self.resolver = table, resolver
        for scope in table.by_node.values():
            if scope.kind == "class":
                for attr, values in scope.attrs.items():
                    for value, method in values:
                        if isinstance(value, (ast.Name, ast.Attribute)):
                            key = resolver.ref_key(value, method)
                            if key is not None:
                                self.union(f"{scope.qualname}.self.{attr}", key)
            for name, bound in scope.bindings.items():
                if len(bound) == 1 and isinstance(bound[0], ast.Name) and not is_import_marker(bound[0]):
                    key = resolver.ref_key(bound[0], scope)
                    if key is not None:
                        self.union(f"{scope.qualname}:{name}", key)
        if isinstance(tree, ast.Module):
            for node, scope in scoped_nodes(tree, table):
                if type(node) is ast.Call:
                    self._call(node, scope)  # type: ignore[arg-type]

    def _call(self, call: ast.Call, scope: Scope) -> None:
        resolver = self.resolver
        function = resolver.function_for(call.func, scope)
        skip = 1 if isinstance(call.func, ast.Attribute) and function is not None else 0
        if function is None and isinstance(call.func, ast.Name):
            owner = self.table.lookup(scope, call.func.id)
            cls = owner.functions.get(call.func.id) if owner is not None else None
            if cls is not None and cls.kind == "class":
                function = cls.functions.get("__init__")
                skip = 1
        if function is None or not isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        args = function.node.args
        positional = [a.arg for a in [*args.posonlyargs, *args.args]][skip:]
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                break
            if index < len(positional):
                self._join(argument, scope, function, positional[index])
        names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for keyword in call.keywords:
            if keyword.arg in names:
                self._join(keyword.value, scope, function, keyword.arg)

    def _join(self, argument: ast.expr, scope: Scope, function: Scope, param: str) -> None:
        if not isinstance(argument, (ast.Name, ast.Attribute)):
            return
        key = self.resolver.ref_key(argument, scope)
        if key is not None:
            self.union(f"{function.qualname}:{param}", key)

    def find(self, key: str) -> str:
        parent = self.parent
        root = key
        while parent.get(root, root) != root:
            root = parent[root]
        while key != root:  # path compression
            key, parent[key] = parent[key], root
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def canonical(self, key: str) -> str:
        """The key with its root (`model` of `model.encoder`) replaced by the root's representative."""
        root, rest = split_root(key)
        return self.find(root) + rest
