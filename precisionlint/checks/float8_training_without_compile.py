"""## What it does
Finds a training script that converts its model to torchao's float8 training (`convert_to_float8_training`) and
compiles nothing: no `torch.compile`, no `.compile()` method, no compile option the script reads. The finding is
information: the run works, it is only slow.

Left alone, because the compile may be decided elsewhere: a script that uses Accelerate (`dynamo_backend` in the
Accelerate config compiles in `accelerator.prepare`) or Transformers' Trainer (`torch_compile` in
TrainingArguments), a file that does not train itself (no backward call: a converter that a training recipe
calls, then compiles), and test code.

## Why is this bad?
torchao's float8 training replaces each `nn.Linear` with a `Float8Linear` that casts its input, weight and
gradient to float8 with a dynamic scale before each matmul (`torchao/float8/float8_linear.py`). Without
`torch.compile` each amax, scale and cast is its own eager kernel with its own trip through memory, which costs
more than the float8 matmul saves: torchao's documentation says "enable torch.compile for competitive
performance" (docs/source/workflows/training.md); users measured an FFN at 3.14 ms and 594 MB in eager float8
against 0.92 ms and 308 MB in fp16, and 0.95 ms and 339 MB once compiled (ao#685), and a whole model 40% slower
than bf16 (ao#2262). torchao's `float8nocompile` prototype exists because of it ("high performance eager mode
float8 training that uses handwritten Triton kernels").

## Example
```python
convert_to_float8_training(model)
optimizer = torch.optim.AdamW(model.parameters())
```

## Use instead
```python
convert_to_float8_training(model)
model = torch.compile(model)
optimizer = torch.optim.AdamW(model.parameters())
```

## Fix safety
No fix: compiling changes start-up time and can meet graph breaks that the user has to look at.

## References
- https://github.com/pytorch/ao/blob/main/docs/source/workflows/training.md
- https://github.com/pytorch/ao/issues/685
- https://github.com/pytorch/ao/issues/2262
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Severity
from precisionlint.core.patterns import lazy_pattern

if TYPE_CHECKING:
    import ast  # a config's check imports this module and parses no Python

CODE = "PL217"
NAME = "float8-training-without-compile"
SEVERITY = Severity.INFO
SUMMARY = "torchao float8 training with no torch.compile: eager casts make it slower than bf16."
TARGET = "settings"
READS = "torch"
TREE_WORDS: tuple[str, ...] = ("convert_to_float8_training",)  # a Python file that holds it is read for this rule

# What compiles, or may: torch.compile / model.compile(), a compile option (`--compile`, `torch_compile`,
# `args.compile`, `compile: true` read from a config) and the frameworks that compile from their own settings.
_COMPILE = lazy_pattern(
    globals(), "_COMPILE", r"compile(?!d_module)")  # `is_compiled_module` only unwraps a model someone else compiled
_ELSEWHERE = ("Accelerator", "accelerate", "TrainingArguments", "Trainer(", "SFTConfig", "GRPOConfig")


def check(ctx: CheckContext) -> Iterator[Finding]:
    document = ctx.document
    text = document.text
    if document.format != "python" or "convert_to_float8_training" not in text or is_test_code(document.path):
        return
    if any(word in text for word in _ELSEWHERE) or ".backward(" not in text:
        return
    if _COMPILE.search(_code_only(document.tree)):
        return
    import ast

    from precisionlint.sources.positions import node_span
    from precisionlint.sources.python_index import PythonIndex

    for call in PythonIndex.of(document).calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "convert_to_float8_training":
            yield ctx.report(
                node_span(document, call),
                "torchao float8 training with nothing compiled in this script: each float8 cast and scale runs "
                "as its own eager kernel, which usually makes the step slower and larger than bf16; compile the "
                "converted model (`model = torch.compile(model)`)\ntorchao's documentation: \"enable "
                "torch.compile for competitive performance\"; measured without it: 3.14 ms and 594 MB against "
                "0.92 ms and 308 MB in fp16 (pytorch/ao#685)",
            )
            return  # one finding per file


def _code_only(tree: ast.AST) -> str:
    """The names, attributes, keywords and strings of the file (not its comments), space-separated."""
    import ast

    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            words.append(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            words.extend(alias.name for alias in node.names)
    return " ".join(words)
