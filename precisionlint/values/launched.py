"""The values a script's launch lines pass to its options, and whether they leave its defaults unused.

`parser.add_argument("--precision", default="fp16")` in train.py, and every launch line of the project's shell
scripts that starts train.py (project/launched.py) passes `--precision bf16`: the default is not what the script
runs with, `bf16` is. A rule then judges the launched value, reported at the framework's keyword with the launch
line as the related location, and says nothing of the default. A launch line that passes the option through a
shell variable (`--precision $PREC`) overrides the default with a value nobody can read here; a launch line
that does not pass it (or passes `"$@"`) leaves the default in play.

Options are matched by the option strings the script declares, exactly as argparse and click match them (the
last occurrence on a line wins); a value is converted as the parser converts it (`type=int`, `store_true`, a
HfArgumentParser boolean field), and a value the parser would refuse (not among `choices`) starts nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from precisionlint.values.candidate import LAUNCH_FLAG, Candidate

Finder = Any  # values.candidates.Finder (it imports the modules that import this one)

# What a launched option word means to the script's parser: the value, or UNREAD when it cannot be read here.
UNREAD = object()
Interpret = Callable[[object], object]


class Launched(NamedTuple):
    """What the project's launch lines pass to one option."""

    items: tuple[Candidate, ...]  # each value a launch line passes, written in its shell script
    every: bool  # every launch line of the script passes the option: its default is never the value
    complete: bool  # every value passed is read (no shell variable, no conversion we cannot follow)


def launch_lines(finder: Finder) -> list[Any]:
    """The launch lines of the project's shell scripts that start this file. The engine hands the document a
    function that reads them (engine.check.launch_lines_of: the project layer sits beside this one); a document
    without one (an in-memory test, a notebook) has none."""
    found = finder._launch_lines
    if found is None:
        provider = finder.document.launch_lines
        found = finder._launch_lines = list(provider(finder.document)) if provider is not None else []
    return found  # type: ignore[no-any-return]


def launched(finder: Finder, words: Sequence[str], interpret: Interpret) -> Launched | None:
    """The values the launch lines pass to the option written `words` (`("--precision", "-p")`), or None when
    no launch line of the project starts the script."""
    lines = launch_lines(finder) if words else []
    if not lines:
        return None
    wanted = frozenset(words)
    items: list[Candidate] = []
    every = True
    complete = True
    for line in lines:
        given = [option for option in line.launch.options if option.word in wanted]
        if not given:
            every = False
            continue
        option = given[-1]  # argparse and click keep the last value given
        value = interpret(option.value)
        if value is UNREAD:
            complete = False
            continue
        items.append(Candidate(value, None, LAUNCH_FLAG, (), False, line.path, (option.word,), option.span))
    return Launched(tuple(items), every, complete)


def argparse_interpreter(finder: Finder, call: Any) -> Interpret:
    """How argparse reads what follows one of the option's words on a command line."""
    import ast

    from precisionlint.core.model import UNRESOLVED

    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    action = keywords.get("action")
    action_name = action.value if isinstance(action, ast.Constant) else (None if action is None else "?")
    convert: Any = str
    type_expr = keywords.get("type")
    if type_expr is not None:
        convert = {"int": int, "float": float, "str": str}.get(type_expr.id if isinstance(type_expr, ast.Name)
                                                               else "")
    choices = keywords.get("choices")
    allowed: list[Any] | None = None
    if isinstance(choices, (ast.List, ast.Tuple, ast.Set)) and all(isinstance(e, ast.Constant)
                                                                  for e in choices.elts):
        allowed = [e.value for e in choices.elts]  # type: ignore[attr-defined]

    def interpret(raw: object) -> object:
        if action_name in ("store_true", "store_false"):
            return action_name == "store_true"
        if action_name is not None and action_name != "store" or "nargs" in keywords or "const" in keywords:
            return UNREAD  # appended, counted, a list: not one value
        if raw is None or raw is UNRESOLVED or not isinstance(raw, str) or convert is None:
            return UNREAD
        try:
            value = convert(raw)
        except ValueError:
            return UNREAD  # argparse refuses it: the line starts nothing
        if allowed is not None and value not in allowed:
            return UNREAD
        return value

    return interpret


def click_interpreter(decorator: Any) -> Interpret:
    """How click reads one of the option's words: `is_flag` options take no value; the rest take a string
    (converted when `type=int|float`)."""
    import ast

    from precisionlint.core.model import UNRESOLVED

    keywords = {k.arg: k.value for k in decorator.keywords if k.arg is not None}
    flag = keywords.get("is_flag")
    if isinstance(flag, ast.Constant) and flag.value is True:
        return lambda raw: True
    type_expr = keywords.get("type")
    convert: Any = str
    if type_expr is not None:
        convert = {"int": int, "float": float, "str": str}.get(type_expr.id if isinstance(type_expr, ast.Name)
                                                               else "")
    if "multiple" in keywords or "nargs" in keywords or convert is None:
        return lambda raw: UNREAD

    def interpret(raw: object) -> object:
        if raw is None or raw is UNRESOLVED or not isinstance(raw, str):
            return UNREAD
        try:
            return convert(raw)
        except ValueError:
            return UNREAD

    return interpret


_TRUE = frozenset({"yes", "true", "t", "y", "1"})
_FALSE = frozenset({"no", "false", "f", "n", "0"})


def field_interpreter(default: object) -> Interpret:
    """How HfArgumentParser reads a dataclass field's option: a boolean field with `string_to_bool` (the flag
    alone means True), a string or number field by the type of its default (transformers/hf_argparser.py)."""
    from precisionlint.core.model import UNRESOLVED

    def interpret(raw: object) -> object:
        if isinstance(default, bool):
            if raw is None:
                return True
            if isinstance(raw, str) and raw.lower() in _TRUE | _FALSE:
                return raw.lower() in _TRUE
            return UNREAD
        if raw is None or raw is UNRESOLVED or not isinstance(raw, str):
            return UNREAD
        if isinstance(default, str):
            return raw
        if isinstance(default, (int, float)):
            try:
                return type(default)(raw)
            except ValueError:
                return UNREAD
        return UNREAD

    return interpret
