"""Low-precision training recipes a Python file constructs, and the NVIDIA compute capabilities that run each.

Transformer Engine (transformer_engine/pytorch/quantization.py, 2.9 and later; fp8.py before): entering
`te.autocast` / `fp8_autocast` asserts `check_fp8_support()` for every recipe (compute capability 8.9+, "Device
compute capability 8.9 or higher required for FP8 execution."), then, per recipe class,
`check_mxfp8_support()` (10.0+, and since 2.6 "MXFP8 (for all gemm layouts) is not supported on 12.0+
architectures yet."), `check_fp8_block_scaling_support()` ("FP8 block scaled GEMM requires compute capability
9.0 or higher and CUDA >= 12.9."; Hopper only, 9.x, in 2.3 to 2.8) and `check_nvfp4_support()` ("Device compute
capability 10.0 or higher required for NVFP4 execution.").

torchao's float8 training (`Float8LinearConfig`, `convert_to_float8_training`) runs its matmuls through
`torch._scaled_mm`, which refuses devices below 8.9 ("torch._scaled_mm is only supported on CUDA devices with
compute capability >= 9.0 or 8.9, or ROCm MI300+", aten/src/ATen/native/cuda/Blas.cpp).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from precisionlint.hardware.gpu import Gpu


class Recipe(NamedTuple):
    label: str  # how a message names the format
    library: str  # "Transformer Engine" | "torchao"
    lowest: tuple[int, int]  # the lowest compute capability that runs it
    below: tuple[int, int] | None  # the first compute capability that no longer runs it (None: every later one)
    refusal: str  # the library's own words


_TE_FP8 = "Device compute capability 8.9 or higher required for FP8 execution."
RECIPES: dict[str, Recipe] = {
    "DelayedScaling": Recipe("FP8 delayed scaling", "Transformer Engine", (8, 9), None, _TE_FP8),
    "Float8CurrentScaling": Recipe("FP8 current scaling", "Transformer Engine", (8, 9), None, _TE_FP8),
    "Float8BlockScaling": Recipe(
        "FP8 block scaling", "Transformer Engine", (9, 0), None,
        "FP8 block scaled GEMM requires compute capability 9.0 or higher and CUDA >= 12.9."),
    "MXFP8BlockScaling": Recipe(
        "MXFP8", "Transformer Engine", (10, 0), (12, 0),
        "Device compute capability 10.0 or higher required for MXFP8 execution; MXFP8 (for all gemm layouts) is "
        "not supported on 12.0+ architectures yet."),
    "NVFP4BlockScaling": Recipe(
        "NVFP4", "Transformer Engine", (10, 0), None,
        "Device compute capability 10.0 or higher required for NVFP4 execution."),
    "Float8LinearConfig": Recipe(
        "FP8 training", "torchao", (8, 9), None,
        "torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+"),
    "convert_to_float8_training": Recipe(
        "FP8 training", "torchao", (8, 9), None,
        "torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+"),
}
# Megatron-LM's launch flags and the Transformer Engine recipe each builds (megatron/core/fp8_utils.py
# get_fp8_recipe, megatron/core/fp4_utils.py get_fp4_recipe): `--fp8-format e4m3|hybrid` turns FP8 on with
# `--fp8-recipe` (default "delayed", TransformerConfig.fp8_recipe); `--fp4-format e2m1` turns FP4 on with
# `--fp4-recipe` (default "nvfp4"). "custom" builds the user's own quantizer: not judged.
MEGATRON_FP8_RECIPES = {"delayed": "DelayedScaling", "tensorwise": "Float8CurrentScaling",
                        "blockwise": "Float8BlockScaling", "mxfp8": "MXFP8BlockScaling"}
MEGATRON_FP4_RECIPES = {"nvfp4": "NVFP4BlockScaling"}
_MEGATRON_FLAG = re.compile(r"--(fp8|fp4)[-_](format|recipe)(?:=|[ \t]+)(['\"]?)(?P<value>[^\s'\"\\)]+)")
# Compound commands, counted where a command starts (a line's start, after `;`, `&`, `|`, `then`, `do`, `else`).
_OPENS = re.compile(r"(?:^|[;&|]|\bthen\b|\bdo\b|\belse\b)\s*(?:if|case|while|until|for|select)\b")
_CLOSES = re.compile(r"(?:^|[;&|]|\s)(?:fi|esac|done)\b")


class Launched(NamedTuple):
    flag: str  # "--fp8-recipe mxfp8", or "--fp8-format hybrid" (recipe: Megatron's default, delayed)
    recipe: Recipe
    start: int  # the value's offsets in the text
    end: int


def megatron_launch(text: str) -> Launched | None:
    """The Transformer Engine recipe a Megatron-LM launch script asks for with its flags, wherever the script
    writes them (on the command line or in an argument array). None when it asks for none, for several (a
    script that picks by model or by a variable), when a flag's value is a shell expansion, or when the flags
    are set under a condition (`if`/`case`, `&&`, `${VAR:+--fp8-format hybrid}`): chosen at run time."""
    if "--fp8" not in text and "--fp4" not in text and "_fp8_" not in text and "_fp4_" not in text:
        return None
    if "pretrain_" not in text and "megatron" not in text.lower():
        return None
    found: dict[tuple[str, str], set[str]] = {}
    where: dict[tuple[str, str], tuple[int, int]] = {}
    spelled: dict[tuple[str, str], str] = {}  # the flag as written: `--fp8-recipe`, or ms-swift's `--fp8_recipe`
    depth = 0
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.split("#", 1)[0] if not raw.lstrip().startswith("#") else ""
        for match in _MEGATRON_FLAG.finditer(line):
            key = (match.group(1), match.group(2))
            value = match.group("value")
            before = line[:match.start()]
            inside = depth + len(_OPENS.findall(before)) - len(_CLOSES.findall(before))
            conditional = inside > 0 or "&&" in before or "||" in before or \
                before.rfind("${") > before.rfind("}")
            if conditional or "$" in value or "{" in value:
                return None
            found.setdefault(key, set()).add(value)
            where.setdefault(key, (offset + match.start("value"), offset + match.end("value")))
            spelled.setdefault(key, line[match.start():match.start("value")].rstrip("='\" \t"))
        depth += len(_OPENS.findall(line)) - len(_CLOSES.findall(line))
        depth = max(depth, 0)
        offset += len(raw)
    for kind, table, default in (("fp8", MEGATRON_FP8_RECIPES, "delayed"), ("fp4", MEGATRON_FP4_RECIPES, "nvfp4")):
        formats, recipes = found.get((kind, "format")), found.get((kind, "recipe"), {default})
        if not formats or len(formats) > 1 or len(recipes) > 1:
            continue
        (name,) = recipes
        if name not in table:
            return None  # "custom", or a recipe this table does not know
        at = where.get((kind, "recipe")) or where[(kind, "format")]
        flag = (kind, "recipe") if (kind, "recipe") in where else (kind, "format")
        shown = f"{spelled[flag]} {name if flag[1] == 'recipe' else next(iter(formats))}"
        return Launched(shown, RECIPES[table[name]], *at)
    return None


# NVFP4 on compute capability 12.x (RTX 50, RTX PRO 6000 Blackwell: 12.0; GB10: 12.1). Transformer Engine's support
# check accepts every device from 10.0 (`_compute_nvfp4_support`), but two features that `NVFP4BlockScaling()` turns
# on by default for the backward pass (transformer_engine/common/recipe/__init__.py: `fp4_quant_bwd_grad` has
# `random_hadamard_transform=not self.disable_rht`, `stochastic_rounding=not self.disable_stochastic_rounding`)
# were built for 10.x only:
# - stochastic rounding uses `cvt.rs`, which exists on 10.0/10.3 only (`ARCH_HAS_STOCHASTIC_ROUNDING`,
#   common/util/ptx.cuh); elsewhere the kernel took the `NVTE_DEVICE_ERROR` branch, printf + assert(0) with the
#   assert compiled out, so gradients were quantized to zero (TransformerEngine#3281, in 2.19.0);
# - the fused Hadamard + cast kernel uses SM100 hardware and fails on 12.x with "CUDA Error: invalid argument"
#   (TransformerEngine#2372, #2956, #3062); 2.16.0 takes the unfused path there (#2968), but GroupedLinear's
#   split_quantize still launched the SM100-only grouped kernel until 2.19.0 (#3265).
# Both also read NVTE_NVFP4_DISABLE_RHT / NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING from the environment.
NVFP4_FIXED_ON_12X = {"stochastic rounding": (2, 19), "grouped RHT": (2, 19), "RHT": (2, 16)}
_NVFP4_SWITCHES = (("disable_rht", "NVTE_NVFP4_DISABLE_RHT", "RHT"),
                   ("disable_stochastic_rounding", "NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING", "stochastic rounding"))


def nvfp4_left_on(call: ast.Call | None, text: str) -> list[str]:
    """The 10.x-only features an NVFP4BlockScaling construction (None: Megatron-LM's, built with the defaults)
    leaves on: "RHT" (random Hadamard transform), "stochastic rounding". A switch passed as anything but a
    literal, a `**kwargs`, or the environment variable named anywhere in the file counts as off: chosen
    elsewhere."""
    if call is not None and any(keyword.arg is None for keyword in call.keywords):
        return []
    found = []
    for keyword_name, variable, feature in _NVFP4_SWITCHES:
        if variable in text:
            continue
        passed = next((k.value for k in call.keywords if k.arg == keyword_name), None) if call is not None else None
        if passed is None or (isinstance(passed, ast.Constant) and passed.value is False):
            found.append(feature)
    return found


def nvfp4_fixed_in(features: list[str], grouped: bool) -> tuple[int, int]:
    """The first Transformer Engine release that trains with these features on compute capability 12.x;
    `grouped`: the model has grouped (MoE) linear layers."""
    keys = [("grouped RHT" if feature == "RHT" and grouped else feature) for feature in features]
    return max(NVFP4_FIXED_ON_12X[key] for key in keys)


# Transformer Engine's own questions whether the GPU runs a recipe (transformer_engine/pytorch/quantization.py:
# FP8GlobalStateManager.is_*_available and the check_*_support functions behind them; `te.is_*_available` in the
# package namespace). A file that asks them decides at run time what it runs: TE's benchmarks build
# MXFP8BlockScaling() and skip it with "Skipping MXFP8: <reason>" where it is not available.
AVAILABILITY_QUERIES = frozenset({
    "is_fp8_available", "is_mxfp8_available", "is_fp8_block_scaling_available", "is_nvfp4_available",
    "check_fp8_support", "check_mxfp8_support", "check_fp8_block_scaling_support", "check_nvfp4_support",
})


def asks_availability(calls: list[ast.Call]) -> bool:
    """Whether the file calls one of Transformer Engine's availability queries."""
    for call in calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in AVAILABILITY_QUERIES:
            return True
    return False


# The words a file must hold for the engine to parse it for these (fp8-unsupported-gpu declares them: TREE_WORDS).
WORDS = ("DelayedScaling", "CurrentScaling", "BlockScaling", "Float8LinearConfig", "convert_to_float8_training")


def runs_on(recipe: Recipe, gpu: Gpu) -> bool:
    """Whether the GPU runs the recipe. AMD cards are judged by their FP8 support alone (the block and
    microscaling recipes above are NVIDIA's)."""
    cc = gpu.compute_capability
    if cc is None:
        return gpu.fp8 or recipe.lowest > (8, 9)
    return cc >= recipe.lowest and (recipe.below is None or cc < recipe.below)


def constructions(tree: ast.Module, text: str, calls: list[ast.Call]) -> Iterator[tuple[ast.Call, str, Recipe]]:
    """The recipe constructions of a file that builds one kind of recipe only, outside any `if`: a file that
    builds several (Megatron's and Transformer Engine's own helpers, which build whatever their caller
    configures), or builds one under a condition (Megatron's `get_fp4_recipe`, a script's `if args.mxfp8:`),
    offers a choice made at run time. A Transformer Engine class counts only in a file that names
    transformer_engine, torchao's in one that names torchao."""
    found: list[tuple[ast.Call, str, Recipe]] = []
    for call in calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "from_recipe_name" and isinstance(func, ast.Attribute):  # Float8LinearConfig.from_recipe_name
            inner = func.value
            name = inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name) else ""
        recipe = RECIPES.get(name)
        if recipe is None:
            continue
        if ("transformer_engine" if recipe.library == "Transformer Engine" else "torchao") not in text:
            continue
        if recipe.below is not None and "transformer_engine.jax" in text and "transformer_engine.pytorch" not in text:
            # Transformer Engine's JAX side checks MXFP8 against 9.9 only, with no refusal of 12.x
            # (transformer_engine/jax/quantize/helper.py, _check_block_scaling_fp8_support)
            recipe = recipe._replace(
                below=None, refusal="Device compute capability 9.9 or higher required for MXFP8 execution.")
        found.append((call, name, recipe))
    if len({recipe.label for _, _, recipe in found}) != 1:
        return
    chosen = _under_a_condition(tree)
    # built only when a run-time setting asks for it (`if config.fp4_recipe == "nvfp4":`): not reported
    yield from (item for item in found if id(item[0]) not in chosen)


def runs_as_script(tree: ast.Module) -> bool:
    """Whether the module has an `if __name__ == "__main__":` guard at its top level: it runs as a script."""
    from precisionlint.script.collect import is_main_guard

    return any(isinstance(node, ast.If) and is_main_guard(node.test) for node in tree.body)


def inside_functions(tree: ast.Module) -> set[int]:
    """ids of the calls written inside a function or method (not at module level)."""
    return {id(inner) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for inner in ast.walk(node) if isinstance(inner, ast.Call)}


def _under_a_condition(tree: ast.Module) -> set[int]:
    """ids of the calls written in the body or the else of an `if` (not the `__main__` guard), in an arm of
    `a if c else b`, in a `match` case, or after the first operand of `and` / `or` (`mode == "fp8" and
    apply_fp8(model)`), and of the calls inside a function of the file that is called only from such places: a
    helper the file calls only when its run-time setting asks for FP8 builds the recipe under that condition."""
    from precisionlint.script.collect import is_main_guard

    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            if is_main_guard(node.test):
                continue  # `if __name__ == "__main__":` is how a script runs at all, not a run-time choice
            branches: list[ast.AST] = [*node.body, *node.orelse]
        elif isinstance(node, ast.IfExp):
            branches = [node.body, node.orelse]
        elif isinstance(node, ast.Match):
            branches = [statement for case in node.cases for statement in case.body]
        elif isinstance(node, ast.BoolOp):
            branches = list(node.values[1:])
        else:
            continue
        for branch in branches:
            found.update(id(inner) for inner in ast.walk(branch) if isinstance(inner, ast.Call))
    functions: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
    callers: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in functions:
                callers.setdefault(name, []).append(node)
    changed = True
    while changed:  # to a fixpoint: a helper called only from a conditionally called helper is conditional too
        changed = False
        for name, calls in callers.items():
            if not all(id(call) in found for call in calls):
                continue
            inner_calls = {id(inner) for definition in functions[name] for inner in ast.walk(definition)
                           if isinstance(inner, ast.Call)}
            if not inner_calls <= found:
                found |= inner_calls
                changed = True
    return found
