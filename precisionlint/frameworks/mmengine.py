"""OpenMMLab / MMEngine Python configs: `optim_wrapper = dict(type="AmpOptimWrapper", dtype=..., loss_scale=...)`.

Evidence: a module-level `optim_wrapper` dict whose `type` is `AmpOptimWrapper` - certain (MMEngine builds the
wrapper from exactly this dict; the config file is never imported here, only parsed).
Vocabulary: mmengine/optim/optimizer/amp_optimizer_wrapper.py: `dtype` in float16 | bfloat16 | float32 |
float64 (an assertion otherwise; None = autocast's default); `loss_scale` is "dynamic", a float (a static
scale: `GradScaler(init_scale=...)` updated back to the same value every step) or a dict of GradScaler
arguments - anything else (an int too) raises TypeError. The wrapper unscales before clipping itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, Mode, Vocabulary, exact
from precisionlint.frameworks.call_words import MMENGINE_MARKER

if TYPE_CHECKING:
    import ast  # a config's check imports this module and parses no Python
    from typing import Any

NAME = "mmengine"
TITLE = "MMEngine"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = ()
PYTHON_WORDS: tuple[bytes, ...] = (b"AmpOptimWrapper",)

DTYPES = ("float16", "bfloat16", "float32", "float64")
MODES = {"float16": Mode("fp16", "mixed"), "bfloat16": Mode("bf16", "mixed"), "float32": Mode("fp32", "true"),
         "float64": Mode("fp64", "true")}
VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="dtype", accepted=DTYPES, canonical=exact(DTYPES), modes=MODES,
    rejection="fails an assertion when AmpOptimWrapper is built",
    source="mmengine/optim/optimizer/amp_optimizer_wrapper.py (AmpOptimWrapper.valid_dtypes)",
)
VOCABULARIES = {"precision": VOCABULARY}
EVIDENCE = "`optim_wrapper = dict(type='AmpOptimWrapper', ...)`"
KEYWORDS = {"dtype": "precision", "loss_scale": "loss_scale"}


def attribute(root: Any, facts: Any) -> Iterator[Any]:
    return iter(())  # MMEngine configs are Python: see amp_wrapper_arguments()


def amp_wrapper_arguments(tree: ast.Module) -> Iterator[tuple[str, ast.expr, ast.AST, ast.stmt]]:
    """(canonical name, value node, key node, statement) of each dtype / loss_scale argument of a module-level
    `optim_wrapper = dict(type='AmpOptimWrapper', ...)` (or the `{...}` literal form)."""
    import ast

    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name) or target.id != "optim_wrapper":
            continue
        pairs = _pairs(statement.value)
        kind = next((value for key, value, _ in pairs if key == "type"), None)
        if not (isinstance(kind, ast.Constant) and kind.value == MMENGINE_MARKER):
            continue
        for key, value, key_node in pairs:
            if key in KEYWORDS:
                yield KEYWORDS[key], value, key_node, statement


def _pairs(node: ast.expr) -> list[tuple[str, ast.expr, ast.AST]]:
    import ast

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return [(kw.arg, kw.value, kw) for kw in node.keywords if kw.arg is not None]
    if isinstance(node, ast.Dict):
        return [(k.value, v, k) for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


CONFIDENCE = CERTAIN
