"""A launch line's flags read by the started script's own parser (argparse or click), for `accelerate launch`.

`accelerate launch --mixed_precision bf16 train.py` exports the launcher's choice; an `Accelerator()` that is not
given `mixed_precision` takes it. Whether the script leaves the choice to the launcher depends on its own options:
`Accelerator(mixed_precision=args.mixed_precision)` with `default=None` does, unless the line gives the script's
`--mixed_precision` too. This module reads a script's options that reach a framework call unchanged (no branch,
no assignment of its own in between) and the value a launch line gives one. (The value a launch line gives a
script's option is otherwise the value layer's: values/launched.py reports it at the framework's keyword.)

The flag is read as argparse reads it: the last occurrence wins, `--flag=value` or `--flag value`,
`store_true`/`store_false` options take no value, `type=int`/`float` convert the word; a word argparse would
refuse (not one of literal `choices`, not a number for `type=int`) or a type the script defines itself gives no
value, and a word that holds a shell variable (`--precision $P`) stays unknown. Anything less certain (an option
with `nargs`, a value that takes a branch in the script) says nothing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from precisionlint.core.model import Document, Setting, Span
    from precisionlint.sources.shell_source import Word

_TYPES: dict[str, Any] = {"int": int, "float": float, "str": str}


class Option(NamedTuple):
    """One option of a script whose value a framework call reads as it is."""

    flags: tuple[str, ...]  # how the command line spells it: ("--precision", "-p")
    store: bool | None  # True/False for `store_true`/`store_false` options (no value word), None otherwise
    convert: Any  # int, float, str, or None (the word as it is)
    choices: tuple[Any, ...] | None  # literal choices, None when any value is accepted
    setting: Setting  # the framework call's setting in the script (its framework, name, scope, span)
    default_is_none: bool  # the option's default is None (or absent): the framework's own default applies
    read_at: ast.expr | None = None  # the keyword's value in the script that reads the option


def script_options(document: Document) -> list[Option]:
    """The options of a parsed script whose value reaches a framework call's keyword unchanged."""
    if document.launch_options is not None:
        return document.launch_options  # type: ignore[no-any-return]
    found: list[Option] = []
    document.launch_options = found
    from precisionlint.values.settings import document_finder

    pending: list[tuple[Setting, ast.expr]] = document.unresolved_values
    if not pending or not isinstance(document.tree, ast.Module):
        return found
    finder = document_finder(document)
    if finder is None:
        return found
    # Attributes and names the script writes: an option's value may be replaced before the call reads it.
    stored_attributes = {node.attr for node in ast.walk(document.tree)
                         if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)}
    for setting, node in pending:
        option = _argparse_option(finder, node, stored_attributes)
        if option is None:
            option = _click_option(finder, node)
        if option is not None:
            found.append(option._replace(setting=setting, read_at=node))
    return found


def _argparse_option(finder: Any, node: ast.expr, stored: set[str]) -> Option | None:
    """`args.precision`, where `args` holds parsed options and one `add_argument` declares `precision`."""
    from precisionlint.values.declared import _is_namespace, declarations

    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)) or node.attr in stored:
        return None
    scope = finder.scope_at(node)
    if not _is_namespace(finder, node.value, scope):
        return None
    found = declarations(finder)
    calls = found.options.get(node.attr, [])
    if len(calls) != 1 or node.attr in found.set_defaults:
        return None  # declared twice (sub-commands) or its default moved: which one a launch reaches is unclear
    call = calls[0][0]
    return _option_of(call, [a.value for a in call.args if isinstance(a, ast.Constant)])


def _option_of(call: ast.Call, names: list[Any]) -> Option | None:
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    flags = tuple(name for name in names if isinstance(name, str) and name.startswith("-"))
    if not flags or "nargs" in keywords or "const" in keywords:
        return None
    action = keywords.get("action")
    store: bool | None = None
    if action is not None:
        if not (isinstance(action, ast.Constant) and action.value in ("store_true", "store_false", "store")):
            return None  # count, append, a custom Action, BooleanOptionalAction: not read here
        store = {"store_true": True, "store_false": False}.get(action.value)
    if keywords.get("is_flag") is not None or keywords.get("flag_value") is not None:
        return None  # a click flag: its value is not the word after it
    convert: Any = None
    kind = keywords.get("type")
    if kind is not None:
        convert = _TYPES.get(kind.id) if isinstance(kind, ast.Name) else None
        if convert is None:
            return None  # the script's own conversion
    choices_node = keywords.get("choices")
    choices: tuple[Any, ...] | None = None
    if choices_node is not None:
        if not isinstance(choices_node, (ast.List, ast.Tuple, ast.Set)) or not all(
                isinstance(e, ast.Constant) for e in choices_node.elts):
            return None
        choices = tuple(e.value for e in choices_node.elts)  # type: ignore[attr-defined]
    default = keywords.get("default")
    default_is_none = default is None or (isinstance(default, ast.Constant) and default.value is None)
    return Option(flags, store, convert, choices, None, default_is_none and store is None)  # type: ignore[arg-type]


def _click_option(finder: Any, node: ast.expr) -> Option | None:
    """A parameter of a function that `@click.option("--precision")` declares, read as it is."""
    if not isinstance(node, ast.Name):
        return None
    scope = finder.scope_at(node)
    owner = finder.table.lookup(scope, node.id)
    function = getattr(owner, "node", None)
    if owner is None or node.id not in owner.params or not isinstance(function, (ast.FunctionDef,
                                                                                ast.AsyncFunctionDef)):
        return None
    if any(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store)
           for n in ast.walk(function)):
        return None  # the parameter is reassigned in the function
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "option"):
            continue
        names = [a.value for a in decorator.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        plain = [n for n in names if not n.startswith("-")]
        long = [n for n in names if n.startswith("--")]
        dest = plain[0] if plain else long[0][2:].replace("-", "_") if long else None
        if dest != node.id or any("/" in n for n in names):
            continue  # another option, or a `--bf16/--no-bf16` switch
        return _option_of(decorator, [n for n in names if n.startswith("-")])
    return None


def flag_value(option: Option, words: tuple[Word, ...]) -> tuple[Any, Word, Word] | None:
    """The value the launch words give the option (the last occurrence), with the flag's word and the value's
    word; None when the words do not give it or argparse would refuse what they give. A value holding a shell
    variable is UNRESOLVED."""
    from precisionlint.core.model import UNRESOLVED

    given: tuple[Any, Word, Word] | None = None
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word.text == "--":
            break  # what follows is positional
        name, equals, rest = word.text.partition("=")
        if name not in option.flags:
            continue
        if option.store is not None:
            given = (option.store, word, word) if not equals else None
            continue
        if equals:
            given = (rest, word, word)
        elif index < len(words) and not words[index].text.startswith("-"):
            given = (words[index].text, word, words[index])
            index += 1
        else:
            given = None  # argparse: "expected one argument"
    if given is None or option.store is not None:
        return given
    raw, flag, value = given
    if "$" in raw or "`" in raw:
        return UNRESOLVED, flag, value
    converted: Any = raw
    if option.convert is not None:
        try:
            converted = option.convert(raw)
        except ValueError:
            return None  # argparse refuses it: "invalid int value"
    if option.choices is not None and converted not in option.choices:
        return None  # argparse refuses it: "invalid choice"
    return converted, flag, value


def _value_span(document: Document, word: Word) -> Span:
    """The value's part of a `--flag=value` word (the written word: quotes may make it longer than its text)."""
    from precisionlint.core.model import Span

    span = word.span
    if span.line != span.end_line:
        return span
    start = document.text.find("=", document.offset(span.line, span.column))
    line, column = document.position(start + 1) if start != -1 else (span.line, span.column)
    return Span(line, column, span.end_line, span.end_column) if line == span.line else span


def accelerate_launch_setting(launch: Any, path: str, script: Document) -> Setting | None:
    """`accelerate launch --mixed_precision bf16 train.py`: the launcher exports the value and an `Accelerator()`
    that is not given `mixed_precision` reads it. A setting only when the script creates Accelerate's
    Accelerator and every such call leaves `mixed_precision` to the launcher (not passed, or passed from an option
    whose default is None and that this line does not give)."""
    from precisionlint.core.model import Setting
    from precisionlint.frameworks.python_calls import dotted_name, import_aliases
    from precisionlint.project import display_path

    mixed = launch.launcher_flags.get("mixed_precision")
    if mixed is None or not isinstance(script.tree, ast.Module):
        return None
    aliases = import_aliases(script.tree)
    creates = []
    for node in ast.walk(script.tree):
        if isinstance(node, ast.Call) and (dotted_name(node.func, aliases) or "").startswith("accelerate") \
                and (dotted_name(node.func, aliases) or "").endswith(".Accelerator"):
            creates.append(node)
    if not creates:
        return None
    options = {id(option.read_at): option for option in script_options(script)}
    for call in creates:
        if any(keyword.arg is None for keyword in call.keywords):
            return None  # `Accelerator(**kwargs)`: may pass it
        keyword = next((k for k in call.keywords if k.arg == "mixed_precision"), None)
        if keyword is None:
            continue
        option = options.get(id(keyword.value))
        if option is None or not option.default_is_none or flag_value(option, launch.script_words) is not None:
            return None  # the script's own value wins over the launcher's
    first = creates[0]
    return Setting(
        name="mixed_precision", value=mixed.value, framework="accelerate", scope=f"accelerate@{launch.span.line}",
        key_path=("--mixed_precision",), span=mixed.span, key_span=mixed.flag_span, value_offsets=(0, 0),
        entry=None, format="shell",
        evidence=f"given to `accelerate launch`, read by the `Accelerator()` that {display_path(path)} creates at "
                 f"line {first.lineno}")
