"""The TF32 state a program writes: which API family sets which backend to which value, and under which tests.

One view for every rule that reads TF32 settings in a script: the hardware rules (a TF32 setting on a GPU
without TF32), `mixed-tf32-apis`, and `ineffective-tf32-setting` (a gate at the wrong compute capability, an
"enable TF32" function that turns it off).

    legacy  torch.backends.cuda.matmul.allow_tf32 = bool       (matmul; default False since 1.12)
            torch.backends.cudnn.allow_tf32 = bool             (cudnn; default True)
            torch.set_float32_matmul_precision("highest" | "high" | "medium")   (matmul; high/medium = TF32)
    new     torch.backends[.cuda.matmul | .cudnn[.conv | .rnn]].fp32_precision = "ieee" | "tf32" | "none"
            (torch >= 2.9; "ieee" turns TF32 off, "none" inherits from the parent)
"""

from __future__ import annotations

import ast
from typing import Any, Literal

from precisionlint.core.model import Span
from precisionlint.core.records import Record
from precisionlint.script.scopes import Scope
from precisionlint.sources.python_index import walk

_ASSIGNED = {
    "torch.backends.cuda.matmul.allow_tf32": ("legacy", "matmul"),
    "torch.backends.cudnn.allow_tf32": ("legacy", "cudnn"),
    "torch.backends.fp32_precision": ("new", "all"),
    "torch.backends.cuda.matmul.fp32_precision": ("new", "matmul"),
    "torch.backends.cudnn.fp32_precision": ("new", "cudnn"),
    "torch.backends.cudnn.conv.fp32_precision": ("new", "cudnn"),
    "torch.backends.cudnn.rnn.fp32_precision": ("new", "cudnn"),
    "torch.backends.mkldnn.fp32_precision": ("new", "mkldnn"),
}
SETTER = "torch.set_float32_matmul_precision"


class Tf32Write(Record):
    """One write of TF32 state."""

    # A plain class rather than a dataclass: importing dataclasses costs every check run's workers several
    # milliseconds (precisionlint/core/records.py has the numbers).
    __slots__ = ("api", "family", "backend", "value", "enables", "span", "text", "scope", "gates")
    _fields = __slots__
    _repr_fields = ("api", "family", "backend", "value", "enables", "span", "text")

    def __init__(
        self,
        api: str,
        family: Literal["legacy", "new"],
        backend: str,
        value: Any,
        enables: bool | None,
        span: Span,
        text: str,
        scope: Scope,
        gates: tuple[tuple[ast.expr, bool], ...] = (),
    ) -> None:
        self.api = api  # "torch.backends.cuda.matmul.allow_tf32", "torch.set_float32_matmul_precision", ...
        self.family = family
        self.backend = backend  # "matmul" | "cudnn" | "all" | "mkldnn"
        self.value = value  # the resolved value (True, "high", "ieee"), or UNKNOWN
        self.enables = enables  # True: TF32 on, False: off, None: unknown or inherit
        self.span = span
        self.text = text  # as written: `torch.backends.cuda.matmul.fp32_precision = "ieee"`
        self.scope = scope
        # `if` tests of this function the write runs under, outermost first, with the arm (True: the body)
        self.gates = gates


def describe(api: str) -> tuple[str, str] | None:
    """(family, backend) of a TF32 attribute that is assigned, None for anything else."""
    return _ASSIGNED.get(api)


def enables(api: str, value: Any) -> bool | None:
    if api == SETTER:
        if value in ("high", "medium"):
            return True
        return False if value == "highest" else None
    if api.endswith(".allow_tf32"):
        return bool(value) if isinstance(value, bool) else None
    if value == "tf32":
        return True
    return False if value == "ieee" else None


def capability_gate_below_ampere(test: ast.expr) -> bool:
    """A test that lets compute capability 7.x through as if it had TF32: `capability >= 7`, `major > 6`,
    `torch.cuda.get_device_capability() >= (7, 0)`, `get_device_capability()[0] >= 7`."""
    for node in walk(test):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        if not mentions_capability(node.left):
            continue
        bound = _number(node.comparators[0])
        if bound is None:
            continue
        op = node.ops[0]
        if isinstance(op, ast.GtE) and 7 <= bound < 8:
            return True
        if isinstance(op, ast.Gt) and 6 <= bound < 7:
            return True
    return False


def mentions_capability(expr: ast.expr) -> bool:
    """The expression reads a compute capability (`get_device_capability()`, `props.major`, `cc`)."""
    for node in walk(expr):
        text = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        lowered = text.lower()
        if "capability" in lowered or lowered in ("major", "cc", "sm", "cc_major", "sm_major"):
            return True
    return False


def _number(expr: ast.expr) -> float | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.Tuple) and expr.elts:
        first = expr.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, int) and not isinstance(first.value, bool):
            return float(first.value)
    return None


_ENABLE_WORDS = ("enable", "allow", "use", "setup", "set_up", "turn_on", "activate")


def means_to_enable(function_name: str) -> bool:
    """`enable_tf32`, `setup_tf32`, `use_tf32`, `_allow_tf32`: a function whose name says it turns TF32 on."""
    lowered = function_name.lower()
    if "tf32" not in lowered or any(word in lowered for word in ("disable", "no_tf32", "off", "restore", "reset")):
        return False
    return any(word in lowered for word in _ENABLE_WORDS)
