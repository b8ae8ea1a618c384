"""Framework settings reached through values: `Trainer(precision=args.precision)` and the like.

The settings pass (frameworks/python_calls.py) records a keyword whose value is not a literal as an UNRESOLVED
setting and keeps its expression aside. Here, only when a rule asks, each such expression gets its candidates
(values.candidates), and each candidate written in the file becomes a Setting of its own: the same framework,
name and scope, the candidate's value, and the span where the user wrote it. Its `origin` says how the value
reaches the call, under which condition, whether on every path, and where the call is (a related location).

CheckContext.report applies the origin to any finding a rule reports at such a setting's span: the message names
where the value comes from and when, a value on some paths only is at most a warning, the call is a related
location, and no fix is offered (the value may be read elsewhere, or converted by the option's type).
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import NOT_YET, SAME_FILE, Document, Related, Setting, Span

if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from precisionlint.values.candidates import Finder
else:
    from precisionlint.core.light_typing import NamedTuple

class Origin(NamedTuple):
    """How a reached setting's value reaches the framework's call."""

    kind: str  # values.candidates kinds: "argparse default", "conditional arm", ...
    where: str  # in words: "the default of a command-line option"
    conditions: tuple[str, ...]  # source text of the conditions under which it is the value
    every_path: bool
    call: Related  # the keyword of the framework call that reads the value

    def note(self) -> str:
        """What a message appends: "(the default of a command-line option, when `--precision` is not given;
        read by `Trainer(precision=...)` at line 12)"."""
        when = f", when {' and '.join(self.conditions)}" if self.conditions else ""
        if self.call.path:  # a value of another file: `call` is where it is written there
            return f"{self.where}{when}"
        return f"{self.where}{when}; {self.call.message}"


def document_finder(document: Document) -> Finder | None:
    """The value layer of a parsed Python document, built once and shared with the training-step model."""
    if document.value_finder is not NOT_YET:
        return document.value_finder  # type: ignore[no-any-return]
    tree = document.tree
    if not isinstance(tree, ast.Module):
        document.value_finder = None
        return None
    from precisionlint.values.candidates import Finder

    table, resolver = shared_scopes(document, tree)
    finder = document.value_finder = Finder(tree, table, resolver, document)
    return finder


def shared_scopes(document: Document, tree: ast.Module) -> tuple[Any, Any]:
    """The ScopeTable and Resolver of a document: the value layer and the script model build them once."""
    found = document.scopes
    if found is None or found[0] is not tree:
        from precisionlint.script.scopes import build_scopes
        from precisionlint.script.values import Resolver

        table = build_scopes(tree, document.text, lambda: document.line_starts)
        found = document.scopes = (tree, table, Resolver(table))
    return found[1], found[2]


def reached_settings(document: Document) -> list[Setting]:
    """A Setting for every candidate value, written in this file, of the settings that are not literals."""
    if document.reached_settings is not None:
        return document.reached_settings
    found: list[Setting] = []
    document.reached_settings = found
    pending: list[tuple[Setting, ast.expr]] = document.unresolved_values
    if not pending:
        return found
    finder = document_finder(document)
    if finder is None:
        return found
    from precisionlint.script.positions import Positions
    from precisionlint.script.values import Dtype
    positions = Positions(document)
    seen: set[tuple[str, str, Span, str]] = set()
    origins = document.value_origins
    if origins is None:
        origins = document.value_origins = {}
    for setting, node in pending:
        candidates = finder.candidates(node, finder.scope_at(node))
        sole = candidates.complete and len(candidates.values) == 1
        call_text = f"read by `{setting.key_path[0]}({setting.key_path[-1]}=...)` at line {setting.span.line}"
        related = Related(SAME_FILE, setting.span, call_text)
        for candidate in candidates.items:
            if isinstance(candidate.value, Dtype) or (candidate.node is None and not candidate.path):
                continue
            if candidate.node is None:
                found.append(_from_another_file(setting, candidate, sole, related, origins))
                continue
            span = positions.span(candidate.node)
            key = (setting.framework, setting.name, span, repr(candidate.value))
            if key in seen:
                continue
            seen.add(key)
            origin = Origin(candidate.kind, candidate.where, candidate.conditions,
                            sole and candidate.every_path, related)
            known = origins.get(span)
            if known is not None and known != origin:
                # two values written at one place (`f"{bits}-mixed"`): say no condition rather than a wrong one
                origin = known._replace(conditions=(), every_path=False)
            origins[span] = origin
            found.append(setting._replace(
                value=candidate.value, span=span,
                value_offsets=(positions.start(candidate.node), positions.end(candidate.node)),
                entry=None, origin=origin))
    return found


def chosen_at_launch(setting: Setting) -> bool:
    """A value the launch picks (one of an option's choices), not one the program writes for itself."""
    from precisionlint.values.candidate import CHOSEN_AT_LAUNCH

    return setting.origin is not None and setting.origin.kind in CHOSEN_AT_LAUNCH


def chosen_by_the_program_alone(setting: Setting) -> bool:
    """A value that runs unless the launch overrides it: written where the framework reads it, on every path, or a
    default (an option's, a dataclass field's, an environment variable's) with no branch on the way. Not an arm of
    a conditional: a branch often picks the precision by hardware (`"bf16" if is_bf16_supported() else "fp16"`,
    an FP8 recipe's branch), which rules about the target GPUs cannot judge."""
    from precisionlint.values.candidate import DEFAULT_KINDS

    origin = setting.origin
    return origin is None or origin.every_path or (origin.kind in DEFAULT_KINDS and len(origin.conditions) <= 1)


def _from_another_file(setting: Setting, candidate: Any, sole: bool, related: Related,
                       origins: dict[Span, Origin]) -> Setting:
    """A value written in another file (a key of a config file the script loads, a flag of a launch line that
    starts it): reported at the framework's keyword in the script, with where it is written as the related
    location."""
    from precisionlint.values.candidate import LAUNCH_FLAG

    if candidate.kind == LAUNCH_FLAG:
        where = f"`{candidate.key_path[0]}` at {candidate.path}:{candidate.span.line}"
    elif candidate.key_path:
        where = f"`{'.'.join(candidate.key_path)}` of {candidate.path}"
    else:
        where = candidate.path
    origin = Origin(candidate.kind, f"{candidate.where} ({where})", candidate.conditions,
                    sole and candidate.every_path, Related(candidate.path, candidate.span or setting.span,
                                                           f"the value {candidate.value!r} is written here"))
    origins.setdefault(setting.span, origin)
    return setting._replace(value=candidate.value, entry=None, origin=origin)
