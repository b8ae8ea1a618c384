"""## What it does
Finds a training dtype chosen with `torch.cuda.is_bf16_supported()` (`dtype = torch.bfloat16 if
torch.cuda.is_bf16_supported() else torch.float16`, `bf16=torch.cuda.is_bf16_supported()`, an `if` that
picks `"bf16"`) when a target GPU has no native bfloat16 (NVIDIA below compute capability 8.0: V100, T4,
GTX/RTX 20xx). Calls with `including_emulation=False` are not reported, nor projects that declare a torch
older than 2.3, nor a branch that lists bf16 beside other dtypes (`[torch.half, torch.bfloat16]`, the dtypes
a device can run): that enumerates, it picks nothing. Runs only with target GPUs (`--gpu`, or `gpus = [...]`
in the configuration). In test code the finding is information: a test picks a dtype to exercise it, not to
train on the target GPUs.

## Why is this bad?
Since PyTorch 2.3 `torch.cuda.is_bf16_supported()` also answers True where bfloat16 is only emulated (it
checks that a bfloat16 tensor can be created), so on a V100 or T4 the test picks bfloat16: training runs
without tensor-core support, several times slower than float16, and with numerics that differ from native
bf16 on the GPUs the recipe was tuned on. Transformers gates `bf16=True` on the same call, so nothing
refuses it at start-up.

## Example
```python
dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
```

## Use instead
```python
dtype = torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16
# or: torch.cuda.get_device_capability() >= (8, 0)
```

## Fix safety
Unsafe: the fix adds `including_emulation=False`, which changes the chosen dtype on GPUs without native bf16
(that is its purpose). The argument needs torch 2.4 or newer (where it is known to exist): where the project
does not declare a torch floor of 2.4, the fix's description says so.

## References
- https://pytorch.org/docs/stable/generated/torch.cuda.is_bf16_supported.html
- NVIDIA compute capabilities: https://developer.nvidia.com/cuda-gpus
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Edit, Finding, Fix, Severity
from precisionlint.script.scopes import scoped_nodes
from precisionlint.sources.python_index import walk

CODE = "PL306"
NAME = "emulated-bf16-selection"
SEVERITY = Severity.WARNING
SUMMARY = "dtype chosen by torch.cuda.is_bf16_supported(), which counts emulated bf16 (V100, T4) since torch 2.3."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"bf16", b"float16")
MODEL_WORDS: tuple[str, ...] = ("is_bf16_supported",)  # a dtype chosen by torch.cuda.is_bf16_supported()
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True
FIXABLE = True

_APIS = ("torch.cuda.is_bf16_supported",)
# String values that name bf16 as a dtype or precision setting (not any text that mentions it).
_BF16_VALUES = frozenset({"bf16", "bfloat16", "bf16-mixed", "bf16-true", "bf16_mixed", "torch.bfloat16"})
# Other dtypes, written as torch attributes or strings: listed beside bf16 they make an enumeration.
_OTHER_DTYPES = frozenset({"float16", "half", "float32", "float", "fp16", "fp32", "float64", "double"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if "is_bf16_supported" not in ctx.document.text:
        return
    from precisionlint.checks._gpu import names, targets

    lacking = [g for g in targets(ctx) if not g.bf16 and g.compute_capability is not None]
    if not lacking:
        return
    model = ctx.script
    in_tests = is_test_code(ctx.document.path)  # a test picks a dtype to exercise it, not to train on the fleet
    torch = ctx.project.version("torch")
    if torch is not None and torch.all_below((2, 3)):
        return  # before 2.3 the call answered False on these GPUs
    reported: set[int] = set()
    for node, scope in scoped_nodes(ctx.document.tree, ctx.script.table):
        for call, chooses in _selections(node):
            if id(call) in reported:
                continue
            if (model.resolver.qualname(call.func, scope) or "") not in _APIS:
                continue
            if any(kw.arg == "including_emulation" for kw in call.keywords) or call.args:
                continue
            reported.add(id(call))
            yield ctx.report(
                model.positions.span(call),
                f"{chooses} when `torch.cuda.is_bf16_supported()` is True, and on {names(lacking)} it is True "
                "through emulation; pass `including_emulation=False`"
                "\nwith no bfloat16 tensor cores the program then computes in emulated bf16, slower than float16"
                "\nor test `torch.cuda.get_device_capability() >= (8, 0)`",
                fix=_fix(ctx, call),
                severity=Severity.INFO if in_tests else None,
            )



def _is_bf16(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "bfloat16") or (
        isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _BF16_VALUES)


def _is_other_dtype(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in _OTHER_DTYPES) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _OTHER_DTYPES)


def _mentions_bf16(nodes: list[ast.AST]) -> bool:
    """A branch that picks bf16. A list of dtypes holding bf16 beside another one (`return [torch.half,
    torch.bfloat16]`: the dtypes a device can run, for a test to loop over) enumerates; it picks nothing."""
    enumerated: set[int] = set()
    for root in nodes:
        for node in walk(root):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and any(_is_other_dtype(e) for e in node.elts):
                enumerated.update(id(e) for e in node.elts)
            elif id(node) not in enumerated and _is_bf16(node):
                return True
    return False


def _calls(test: ast.AST) -> list[ast.Call]:
    """The calls of a selecting expression, none when it also tests the compute capability (the advice this rule
    gives: `is_bf16_supported() and get_device_capability() >= (8, 0)` picks native bf16 only)."""
    calls = []
    for node in walk(test):
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, (ast.Name, ast.Attribute)) and "capability" in (
                node.id if isinstance(node, ast.Name) else node.attr).lower():
            return []
    return calls


def _selections(node: ast.AST) -> Iterator[tuple[ast.Call, str]]:
    """Calls whose answer picks a bf16 dtype or flag, with words for the message."""
    if isinstance(node, ast.IfExp):
        calls = _calls(node.test)
        if calls and _mentions_bf16([node.body, node.orelse]):
            for call in calls:
                yield call, "this expression picks bfloat16"
    elif isinstance(node, ast.If):
        calls = _calls(node.test)
        if calls and _mentions_bf16([*node.body, *node.orelse]):
            for call in calls:
                yield call, "this test picks bfloat16"
    elif isinstance(node, ast.keyword) and node.arg in ("bf16", "bf16_full_eval", "use_bf16"):
        for call in _calls(node.value):
            yield call, f"`{node.arg}=` turns bfloat16 on"
    elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.lower() in ("bf16", "use_bf16", "is_bf16") for t in node.targets):
        for call in _calls(node.value):
            yield call, "this flag turns bfloat16 on"


def _fix(ctx: CheckContext, call: ast.Call) -> Fix | None:
    from precisionlint.script.fixes import open_paren

    positions = ctx.script.positions
    paren = open_paren(positions.text, positions.end(call.func))
    if paren is None or call.args or call.keywords:
        return None
    from precisionlint.checks._pins import floor_has

    _, note = floor_has(ctx, "torch", (2, 4))
    return Fix(
        "Pass `including_emulation=False` (changes the dtype on GPUs without native bf16" + (f"; {note})" if note
                                                                                             else ")"),
        "unsafe",
        (Edit(paren + 1, paren + 1, "including_emulation=False"),),
    )
