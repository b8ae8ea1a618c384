"""Candidate values and how each reaches an expression: the types the value layer answers with.

A candidate is a value with its provenance: where it is written (an expression of this file, or a key of a
config file that the script loads: `path` and `key_path`), how it reaches the expression that a framework reads,
the conditions under which it is the value, and whether it is the value on every path.
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

# How a candidate reaches the expression (Candidate.kind), as messages name it.
LITERAL = "literal"
ASSIGNMENT = "assignment"
ARM = "conditional arm"
OR_DEFAULT = "fallback of `or`"
TABLE = "table entry"
HELPER = "helper return"
PARAMETER = "parameter default"
ARGUMENT = "call argument"
ATTRIBUTE = "attribute"
ARGPARSE_DEFAULT = "argparse default"
ARGPARSE_CHOICE = "argparse choice"
CLICK_DEFAULT = "click default"
DATACLASS_DEFAULT = "dataclass default"
ENVIRONMENT_DEFAULT = "environment default"
CONFIG_KEY = "config key"
LAUNCH_FLAG = "launch flag"

# Values the launch chooses (a flag's choices): a rule that judges what the program writes should not judge them.
CHOSEN_AT_LAUNCH = frozenset({ARGPARSE_CHOICE})
# Kinds whose value the launch may override: never a value on every path.
OVERRIDABLE = frozenset({ARGPARSE_DEFAULT, ARGPARSE_CHOICE, CLICK_DEFAULT, DATACLASS_DEFAULT, ENVIRONMENT_DEFAULT,
                         PARAMETER, CONFIG_KEY, LAUNCH_FLAG})
# The values that run unless a launch says otherwise: the defaults (the value when nothing is passed), and what a
# launch line of the project's shell scripts passes.
DEFAULT_KINDS = frozenset({ARGPARSE_DEFAULT, CLICK_DEFAULT, DATACLASS_DEFAULT, ENVIRONMENT_DEFAULT, LAUNCH_FLAG})
# Kinds a more specific kind replaces when a value passes through them (a literal assigned to a name is
# reported as that name's assignment; an argparse default stays an argparse default through any name).
_PLAIN = frozenset({LITERAL, ASSIGNMENT})


class Candidate(NamedTuple):
    """One value an expression may take.

    value       a Python constant (str, int, float, bool, None) or precisionlint.script.values.Dtype
    node        the expression where the value is written in this file (None: in another file)
    kind        how it reaches the expression (the constants above)
    conditions  the conditions under which it is the value, as source text ("`args.fp16`", "not `args.fp16`")
    every_path  the value on every path that reaches the expression (no branch, no default a launch overrides)
    path        another file's path where the value is written (a config file's key), "" for this file
    key_path    the keys of that config file, outermost first
    span        where in that file (a precisionlint.core.model.Span), for a candidate of another file
    """

    value: Any
    node: ast.AST | None
    kind: str
    conditions: tuple[str, ...] = ()
    every_path: bool = True
    path: str = ""
    key_path: tuple[str, ...] = ()
    span: Any = None

    def weakened(self, condition: str | None = None, kind: str | None = None) -> Candidate:
        """The same value reached through a branch: not on every path, under one more condition."""
        conditions = self.conditions if condition is None else (condition, *self.conditions)
        return self._replace(every_path=False, conditions=conditions,
                             kind=kind if kind is not None and self.kind in _PLAIN else self.kind)

    def through(self, kind: str) -> Candidate:
        """The same value reached through a step that does not branch (a name, a helper's single return)."""
        return self._replace(kind=kind) if self.kind in _PLAIN else self

    @property
    def where(self) -> str:
        """How messages say where the value comes from: "the argparse default", "one arm of a conditional"."""
        return WHERE.get(self.kind, self.kind)


WHERE = {
    LITERAL: "the value written here",
    ASSIGNMENT: "an assignment",
    ARM: "one arm of a conditional",
    OR_DEFAULT: "the fallback of an `or`",
    TABLE: "an entry of a table",
    HELPER: "the return value of a helper",
    PARAMETER: "a parameter's default",
    ARGUMENT: "an argument of a call",
    ATTRIBUTE: "an attribute's assignment",
    ARGPARSE_DEFAULT: "the default of a command-line option",
    ARGPARSE_CHOICE: "a choice of a command-line option",
    CLICK_DEFAULT: "the default of a click option",
    DATACLASS_DEFAULT: "the default of a dataclass field",
    ENVIRONMENT_DEFAULT: "the default of an environment variable",
    CONFIG_KEY: "a key of a config file",
    LAUNCH_FLAG: "a flag of a launch line",
}


class Candidates(NamedTuple):
    """The values an expression may take. `complete`: no way of choosing the value was left unresolved."""

    items: tuple[Candidate, ...]
    complete: bool

    @property
    def values(self) -> set[Any]:
        return {c.value for c in self.items}


NONE = Candidates((), False)


