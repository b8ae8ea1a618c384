"""What a script declares for its launch: the options a user sets on the command line or in the environment.

  - argparse: `parser.add_argument("--precision", default=..., choices=..., type=..., action=...)` read as
    `args.precision` (`args` from `parse_args()`/`parse_known_args()`, or a parameter), with `set_defaults`;
  - dataclass fields (`precision: str = "bf16"`, `field(default=...)`): the HfArgumentParser pattern, read as
    `training_args.precision`;
  - click options: `@click.option("--precision", default=...)` on the function whose parameter is read;
  - `os.environ.get("NAME", default)`, `os.getenv("NAME", default)`.

A default is a value the launch may override: never a value on every path. The choices of an option are values
the launch picks (values.candidates.CHOSEN_AT_LAUNCH).
"""

from __future__ import annotations

import ast
from typing import Any

from precisionlint.script.scopes import Scope, scoped_nodes
from precisionlint.values.candidate import (
    ARGPARSE_CHOICE,
    ARGPARSE_DEFAULT,
    CLICK_DEFAULT,
    DATACLASS_DEFAULT,
    ENVIRONMENT_DEFAULT,
    NONE,
    Candidate,
    Candidates,
)
from precisionlint.values.launched import argparse_interpreter, click_interpreter, field_interpreter, launched

# The functions below take the Finder of values.candidates (typed Any: that module imports this one).
Finder = Any

# Calls whose result is the namespace of parsed options (argparse, HfArgumentParser, jsonargparse, ...).
_PARSE_CALLS = frozenset({"parse_args", "parse_known_args", "parse_args_into_dataclasses", "parse_dict",
                          "parse_yaml_file", "parse_json_file", "parse_intermixed_args"})
_TYPES = {"int": int, "float": float, "str": str}


class Declarations:
    """The options of one file: argparse options by destination, dataclass fields by name (one walk)."""

    def __init__(self, finder: Finder) -> None:
        self.options: dict[str, list[tuple[ast.Call, Scope]]] = {}
        self.set_defaults: dict[str, list[tuple[ast.expr, Scope]]] = {}
        self.fields: dict[str, list[tuple[ast.expr | None, Scope, str]]] = {}
        # (name, attribute) the file assigns (`args.precision = "16-mixed"`): a parsed value it may replace
        self.stored: set[tuple[str, str]] = set()
        for node, scope in scoped_nodes(finder.tree, finder.table):
            kind = type(node)
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                if isinstance(func, ast.Attribute):
                    if func.attr == "add_argument":
                        dest = _dest(node)  # type: ignore[arg-type]
                        if dest is not None:
                            self.options.setdefault(dest, []).append((node, scope))  # type: ignore[arg-type]
                    elif func.attr == "set_defaults":
                        for keyword in node.keywords:  # type: ignore[attr-defined]
                            if keyword.arg is not None:
                                self.set_defaults.setdefault(keyword.arg, []).append((keyword.value, scope))
            elif kind is ast.Attribute and isinstance(getattr(node, "ctx", None), ast.Store) \
                    and isinstance(node.value, ast.Name):  # type: ignore[attr-defined]
                self.stored.add((node.value.id, node.attr))  # type: ignore[attr-defined]
            elif kind is ast.ClassDef and _is_dataclass(node):  # type: ignore[arg-type]
                inner = finder.table.scope_of(node) or scope
                for statement in node.body:  # type: ignore[attr-defined]
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                        self.fields.setdefault(statement.target.id, []).append(
                            (_field_default(statement.value), inner, node.name))  # type: ignore[attr-defined]


def declarations(finder: Finder) -> Declarations:
    if finder._declarations is None:
        finder._declarations = Declarations(finder)
    return finder._declarations


def _dest(call: ast.Call) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "dest" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
            return keyword.value.value
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names or len(names) != len(call.args):
        return None
    long = [n for n in names if n.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    if names[0].startswith("-"):
        return names[0].lstrip("-").replace("-", "_")
    return names[0]  # a positional argument


def _is_dataclass(node: ast.ClassDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("dataclass", "define", "frozen", "attrs"):
            return True
    return False


def _field_default(value: ast.expr | None) -> ast.expr | None:
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("field", "Field", "attrib", "ib"):
            for keyword in value.keywords:
                if keyword.arg == "default":
                    return keyword.value
            return None
    return value


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_namespace(finder: Finder, base: ast.Name, scope: Scope) -> bool:
    """`args` holds parsed options: bound to a parse call, or to values this file cannot see (a parameter, a
    tuple unpacked from `parse_args_into_dataclasses()`), never to anything else it can see."""
    owner, values = finder.table.values(scope, base.id)
    if owner is None:
        return False
    for value in values:
        if value is None:
            continue
        if isinstance(value, ast.Subscript):
            value = value.value
        if isinstance(value, ast.Call):
            func = value.func
            # `parser.parse_args()`, or the script's own `args = parse_args()` helper that returns it
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in _PARSE_CALLS:
                continue
        return False
    return True


def _annotation(finder: Finder, base: ast.Name, scope: Scope) -> str | None:
    """The class name a parameter is annotated with (`run_args: RunArguments`), if `base` is such a parameter."""
    owner = finder.table.lookup(scope, base.id)
    if owner is None or base.id not in owner.params or not isinstance(owner.node, (ast.FunctionDef,
                                                                                   ast.AsyncFunctionDef)):
        return None
    args = owner.node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if arg.arg == base.id and arg.annotation is not None:
            annotation = arg.annotation
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                return annotation.value
            if isinstance(annotation, ast.Name):
                return annotation.id
            if isinstance(annotation, ast.Attribute):
                return annotation.attr
    return None


def option_candidates(finder: Finder, base: ast.Name, attr: str, scope: Scope, depth: int) -> Candidates:
    """`args.attr`: the argparse option or dataclass field of this file that `attr` names."""
    if not _is_namespace(finder, base, scope):
        return NONE
    found = declarations(finder)
    if (base.id, attr) in found.stored:
        return NONE  # the script replaces the parsed value (`if args.precision == "16": args.precision = ...`)
    options = found.options.get(attr, [])
    fields = found.fields.get(attr, [])
    annotated = _annotation(finder, base, scope)
    if annotated is not None:
        # `def train(run_args: RunArguments)`: that class's field, not a command-line option of the same name
        options = []
        fields = [f for f in fields if f[2] == annotated]
    elif options:
        fields = []  # `args` of argparse: its options, not a dataclass field of the same name
    if not options and not fields:
        return NONE
    items: list[Candidate] = []
    complete = True
    for call, call_scope in options:
        option = str(next((a.value for a in call.args if isinstance(a, ast.Constant)), attr))
        condition = f"`{option}` is not given"
        action = _keyword(call, "action")
        action_name = action.value if isinstance(action, ast.Constant) else None
        overridden = found.set_defaults.get(attr)
        default = _keyword(call, "default")
        by_launch = launched(finder, _words(call.args), argparse_interpreter(finder, call))
        if by_launch is not None:
            items += by_launch.items
        if by_launch is not None and by_launch.every:
            default = overridden = action_name = None  # every launch line passes the option: no default runs
        if overridden:
            for value, value_scope in overridden:
                items += _defaults(finder, value, value_scope, depth, condition, None)
        elif default is not None:
            items += _defaults(finder, default, call_scope, depth, condition, _keyword(call, "type"))
        elif action_name in ("store_true", "store_false"):
            items.append(Candidate(action_name == "store_false", call.args[0] if call.args else call,
                                   ARGPARSE_DEFAULT, (condition,), False))
        choices = _keyword(call, "choices")
        if isinstance(choices, (ast.List, ast.Tuple, ast.Set)) and not any(
                isinstance(e, ast.Starred) for e in choices.elts):
            for element in choices.elts:
                if isinstance(element, ast.Constant):
                    items.append(Candidate(element.value, element, ARGPARSE_CHOICE,
                                           (f"`{option} {element.value!s}` is given",), False))
        else:
            complete = False  # the launch may pass any value
    for field_default, _, cls_name in fields:
        complete = False
        by_launch = None
        if "HfArgumentParser" in finder.text:
            # HfArgumentParser names a field's option `--name` (and `--name-with-dashes` since Transformers 4.36)
            written = field_default.value if isinstance(field_default, ast.Constant) else None
            words = [f"--{attr}", f"--{attr.replace('_', '-')}"]
            by_launch = launched(finder, words, field_interpreter(written))
        if by_launch is not None:
            items += by_launch.items
            if by_launch.every:
                continue
        if field_default is None:
            continue
        condition = f"`{attr}` of `{cls_name}` is not set"
        items += _defaults(finder, field_default, finder.table.module, depth, condition, None, DATACLASS_DEFAULT)
    return Candidates(tuple(items), complete)


def _defaults(finder: Finder, value: ast.expr, scope: Scope, depth: int, condition: str,
              type_expr: ast.expr | None, kind: str = ARGPARSE_DEFAULT) -> list[Candidate]:
    """The candidates of a default, converted as argparse converts a string default through `type=`."""
    convert: Any = None
    if type_expr is not None:
        name = type_expr.id if isinstance(type_expr, ast.Name) else None
        convert = _TYPES.get(name or "")
        if convert is None:
            convert = False  # a function of the user's: a string default's value is not known
    found = finder.candidates(value, scope, depth + 1)
    items = []
    for candidate in found.items:
        result = candidate.value
        if isinstance(result, str) and convert is not None:
            if convert is False:
                continue
            try:
                result = convert(result)
            except ValueError:
                continue
        items.append(candidate._replace(value=result).weakened(condition, kind)._replace(
            kind=kind if candidate.kind in ("literal", "assignment") else candidate.kind))
    return items


def parameter_declarations(finder: Finder, function: ast.FunctionDef | ast.AsyncFunctionDef,
                           name: str) -> Candidates | None:
    """A parameter set by a click option on its function, or None when no decorator declares it."""
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "option"):
            continue
        names = [a.value for a in decorator.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        plain = [n for n in names if not n.startswith("-")]
        long = [n for n in names if n.startswith("--")]
        dest = plain[0] if plain else long[0][2:].replace("-", "_") if long else None
        if dest != name:
            continue
        default = _keyword(decorator, "default")
        by_launch = launched(finder, _words(decorator.args), click_interpreter(decorator))
        items = list(by_launch.items) if by_launch is not None else []
        if default is None or (by_launch is not None and by_launch.every):
            return Candidates(tuple(items), False)  # no default, or every launch line passes the option
        scope = finder.table.module
        condition = f"`{long[0] if long else name}` is not given"
        items += _defaults(finder, default, scope, 0, condition, None, CLICK_DEFAULT)
        return Candidates(tuple(items), False)
    return None


def _words(args: list[ast.expr]) -> list[str]:
    """The option strings a declaration gives (`"--precision", "-p"`)."""
    return [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value[:1] == "-"]


def environment_default(finder: Finder, call: ast.Call, scope: Scope, depth: int) -> Candidates | None:
    """`os.environ.get(NAME, default)` / `os.getenv(NAME, default)`: the default, when NAME is not set."""
    qualname = finder.resolver.qualname(call.func, scope)
    if qualname not in ("os.environ.get", "os.getenv"):
        return None
    if len(call.args) != 2:
        return NONE
    name = call.args[0]
    shown = str(name.value) if isinstance(name, ast.Constant) else finder.segment(name)
    condition = f"the environment variable `{shown}` is not set"
    found = finder.candidates(call.args[1], scope, depth + 1)
    return Candidates(tuple(c.weakened(condition, ENVIRONMENT_DEFAULT) for c in found.items), False)
