"""Version tests that pick an API by torch's version, read well enough to say which branch a torch release takes.

A compatibility switch (`if version.parse(torch.__version__) >= version.parse("1.6"): from torch.cuda.amp import
autocast`) is no excuse for a deprecated API when the branch that uses it is the one every torch that warns
takes: since PyTorch 2.4 `torch.cuda.amp.autocast` warns, and every 2.4 or newer is at least 1.6. A rule asks
`taken(gates, floor, ceiling)` with the torch versions it cares about (those that warn, narrowed by the versions
the project declares), and hears True only when each test is decided for every one of them.

Read: a comparison of torch's version with a literal version, each side written as
`version.parse(...)`/`Version(...)`/`LooseVersion(...)`/`StrictVersion(...)`/`parse_version(...)`/
`digit_version(...)` of `torch.__version__`, `TORCH_VERSION` or `torch_version` (or such a name alone, compared
with a parsed literal); the flags Lightning and Transformers define that way (`_TORCH_GREATER_EQUAL_2_4`,
`is_torch_greater_or_equal_than_1_10`); `not`, `and`, `or` of those. Anything else (`hasattr`, a string
comparison, whose order is not the versions' order, a flag computed elsewhere) is undecided: the branch stays a
compatibility fallback.
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.patterns import pattern_on_use
from precisionlint.project.versions import Bound, Version, parse_version

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

_PARSERS = frozenset({"parse", "Version", "LooseVersion", "StrictVersion", "parse_version", "digit_version"})
_VERSION_NAMES = frozenset({"TORCH_VERSION", "torch_version", "_TORCH_VERSION", "_torch_version"})
_FLIPPED = {ast.GtE: ast.LtE, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.Lt: ast.Gt}


class Gate(NamedTuple):
    """One version test around a statement, and the branch the statement is in (True: the test's body)."""

    test: ast.expr
    branch: bool


def _parsed(node: ast.expr) -> ast.expr | None:
    """The argument of `version.parse(x)` and its kin, else None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in _PARSERS:
            return node.args[0]
    return None


def _is_torch_version(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "__version__" and isinstance(node.value, ast.Name) and node.value.id == "torch"
    return isinstance(node, ast.Name) and node.id in _VERSION_NAMES


def _literal(node: ast.expr) -> Version | None:
    inner = _parsed(node)
    if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and len(inner.value) < 64:
        found = parse_version(inner.value)
        if found is not None and not found[1]:
            return found[0]
    return None


# The libraries' own flags, each defined as a comparison of torch's version: Lightning's `_TORCH_GREATER_EQUAL_2_4`
# (RequirementCache("torch>=2.4")) and `_TORCH_LESS_EQUAL_1_10_2`, Transformers' `is_torch_greater_or_equal_than_1_10`
# and `is_torch_less_than_1_11` (transformers/pytorch_utils.py)
_FLAGS = (
    (pattern_on_use(r"_?TORCH_GREATER_EQUAL_(\d+(?:_\d+)+)"), ast.GtE),
    (pattern_on_use(r"_?TORCH_LESS_EQUAL_(\d+(?:_\d+)+)"), ast.LtE),
    (pattern_on_use(r"is_torch_greater_or_equal_than_(\d+(?:_\d+)+)"), ast.GtE),
    (pattern_on_use(r"is_torch_less_than_(\d+(?:_\d+)+)"), ast.Lt),
)


def _flag(test: ast.expr) -> tuple[type[ast.cmpop], Version] | None:
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
    if name is None or len(name) > 64:
        return None
    for pattern, op in _FLAGS:
        match = pattern.fullmatch(name)
        if match is not None:
            found = parse_version(match.group(1).replace("_", "."))
            return (op, found[0]) if found is not None else None
    return None


def comparison(test: ast.expr) -> tuple[type[ast.cmpop], Version] | None:
    """`(ast.GtE, (1, 6))` for a test that reads "torch's version >= 1.6", else None."""
    flag = _flag(test)
    if flag is not None:
        return flag
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if op not in _FLIPPED:
        return None
    for torch_side, literal_side, written in ((left, right, op), (right, left, _FLIPPED[op])):
        inner = _parsed(torch_side)
        # a bare name is a parsed version only where it is compared with a parsed literal
        subject = inner if inner is not None else torch_side if isinstance(torch_side, ast.Name) else None
        version = _literal(literal_side)
        if subject is not None and version is not None and _is_torch_version(subject):
            return written, version
    return None


def is_version_test(test: ast.expr) -> bool:
    """Every leaf of the test is a comparison read above: its outcome depends on torch's version alone."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return is_version_test(test.operand)
    if isinstance(test, ast.BoolOp):
        return all(is_version_test(value) for value in test.values)
    return comparison(test) is not None


def _at_most(ceiling: Bound | None, version: Version) -> bool:
    """Every allowed version is below `version` (a ceiling of `<= version` allows it: not below)."""
    if ceiling is None:
        return False
    return ceiling.version < version or (ceiling.version == version and not ceiling.inclusive)


def outcome(test: ast.expr, floor: Version, ceiling: Bound | None) -> bool | None:
    """The test's value for every torch release from `floor` up to `ceiling`; None when it differs among them
    or cannot be read. Versions compare by their release (project/versions.py trims `2.4.0` to `2.4`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = outcome(test.operand, floor, ceiling)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [outcome(value, floor, ceiling) for value in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else True if all(v is True for v in values) else None
        return True if True in values else False if all(v is False for v in values) else None
    found = comparison(test)
    if found is None:
        return None
    op, version = found
    if op is ast.GtE:
        return True if floor >= version else False if _at_most(ceiling, version) else None
    if op is ast.Gt:
        return True if floor > version else None
    if op is ast.Lt:
        return False if floor >= version else True if _at_most(ceiling, version) else None
    # ast.LtE
    return False if floor > version else None


def taken(gates: tuple[Gate, ...], floor: Version, ceiling: Bound | None) -> bool:
    """Every torch release from `floor` up to `ceiling` runs the branch these gates lead to."""
    return bool(gates) and all(outcome(gate.test, floor, ceiling) is gate.branch for gate in gates)
