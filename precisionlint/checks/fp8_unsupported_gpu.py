"""## What it does
Finds FP8 training (Lightning `precision="transformer-engine"` or `"transformer-engine-float16"`,
Accelerate `mixed_precision: fp8`) when a target GPU has no FP8 tensor cores: NVIDIA GPUs below compute
capability 8.9 (everything before Ada Lovelace and Hopper, including the A100), and AMD before CDNA 3.

In a script it also reads the low-precision recipe built, against the compute capabilities that run it:

| Built in the script | Runs on compute capability |
|---|---|
| Transformer Engine `DelayedScaling()`, `Float8CurrentScaling()` | 8.9 and newer |
| Transformer Engine `Float8BlockScaling()` | 9.0 and newer, with CUDA 12.9+ (Transformer Engine 2.3 to 2.8: 9.x only) |
| Transformer Engine `MXFP8BlockScaling()` | 10.x only: refused on 12.0 and newer (RTX 50, RTX PRO 6000, GB10) |
| Transformer Engine `NVFP4BlockScaling()` | 10.0 and newer (12.x: see below for training) |
| torchao `Float8LinearConfig`, `Float8LinearConfig.from_recipe_name`, `convert_to_float8_training` | 8.9 and newer |

A Megatron-LM launch script (one that names `pretrain_*` or Megatron) is read for its flags wherever it writes them,
on the command line or in an argument array: `--fp8-format e4m3|hybrid` with `--fp8-recipe` `delayed` (the default),
`tensorwise`, `blockwise` or `mxfp8` builds Transformer Engine's `DelayedScaling`, `Float8CurrentScaling`,
`Float8BlockScaling` or `MXFP8BlockScaling`, and `--fp4-format e2m1` (recipe `nvfp4`) builds `NVFP4BlockScaling`
(`get_fp8_recipe` in megatron/core/fp8_utils.py, `get_fp4_recipe` in megatron/core/fp4_utils.py), each judged as in
the table; ms-swift's `megatron sft` takes the same options spelled `--fp8_format` / `--fp8_recipe`
(swift/megatron/arguments/megatron_args.py). Flags set under a condition (`if`, `case`, `&&`, `${VAR:+...}`), with a
shell variable as value, or naming several recipes in one script are chosen at run time and not reported.

A Transformer Engine class counts only in a file that names `transformer_engine`, torchao's only in one that names
`torchao`. A recipe built under an `if` (Megatron-LM's `get_fp4_recipe` under `if config.fp4_recipe == ...`, a
script's `if args.mxfp8:`) or in a file that builds recipes of several formats (a helper that builds whichever
recipe its caller configures) is chosen at run time and is not reported, and so is one built in a function the file
calls only from such places (`if mode == "fp8" and apply_fp8(model):`), and so is one in a file that asks
Transformer Engine whether the GPU runs it (`FP8GlobalStateManager.is_mxfp8_available()`, `check_fp8_support()`,
...: its benchmarks build `MXFP8BlockScaling()` and skip it where it is not available). Nor is a recipe built in a
function of a library module, one where nothing trains (no backward, optimizer step or GradScaler) and that has no
`if __name__ == "__main__":` guard (Accelerate's `convert_model_to_fp8_ao`, a config's `__post_init__`): it builds
the recipe for a caller that chose FP8, and the caller is what runs on the GPU. One finding per format and file.

Nothing is reported for a file written for another accelerator, which never runs on the target GPUs: a Python
module that imports `habana_frameworks`, `optimum.habana` or `torch_xla` at its top level (not under an `if` or
`try`), an Accelerate config whose `distributed_type` is XLA, MULTI_HPU, MULTI_XPU or another non-GPU type, a
setting beside a Lightning `accelerator` of "tpu", "hpu" or "mps", and the files of the optimum-habana project
(Transformers on Habana Gaudi; its DeepSpeed configs are written for Gaudi). A file that mentions CUDA, NVIDIA
or Accelerate's MULTI_GPU anywhere keeps its findings: it may run on the target GPUs too.
Nor for a file whose name names other GPU models and none of the targets: with `--gpu V100`, a project's
`a100_config.json` is the one it runs on A100s.

## Why is this bad?
FP8 matmuls need FP8 tensor cores: compute capability 8.9 (L4, L40S, RTX 4090) or 9.0+ (H100, H200, B200).
NVIDIA Transformer Engine, which Lightning's `"transformer-engine"` precision uses, refuses to run FP8 below
8.9 ("Device compute capability 8.9 or higher required for FP8 execution"), so the run fails as soon as
training starts (an error). Accelerate warns and falls back to fp16 mixed precision below 8.9, so the run
trains in another precision than the config says (a warning). The suggested replacement is written in the
framework's own vocabulary (Lightning `'bf16-mixed'`, Accelerate `'bf16'`, Composer `'amp_bf16'`, axolotl
`bf16: true`; the fp16 spelling where a target GPU lacks bf16 too). In test code the finding is information: a
test exercises FP8 on purpose.

Transformer Engine checks the recipe when its autocast is entered: every recipe first needs FP8
("Device compute capability 8.9 or higher required for FP8 execution."), then `MXFP8BlockScaling` needs 10.0+
and, since Transformer Engine 2.6, "MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet.";
`Float8BlockScaling` "requires compute capability 9.0 or higher and CUDA >= 12.9"; `NVFP4BlockScaling` needs
"Device compute capability 10.0 or higher" (transformer_engine/pytorch/quantization.py, `_compute_*_support` and
`autocast_enter`). torchao's float8 training runs its matmuls through `torch._scaled_mm`, which raises
"torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+"
(aten/src/ATen/native/cuda/Blas.cpp). Each fails the run when training starts, on the booked machine.

NVFP4 on compute capability 12.x (RTX 50, RTX PRO 6000 Blackwell: 12.0; GB10: 12.1) passes that check, but the full
NVFP4 recipe trains on 10.x only: `NVFP4BlockScaling()` turns on, for the gradients, stochastic rounding and a
random Hadamard transform (`fp4_quant_bwd_grad` in transformer_engine/common/recipe/__init__.py), and both were
built for 10.x. Stochastic rounding uses the `cvt.rs` instruction, which exists on 10.0 and 10.3 only
(`ARCH_HAS_STOCHASTIC_ROUNDING`, transformer_engine/common/util/ptx.cuh); elsewhere the kernel printed "FP4 cvt.rs
PTX instructions are architecture-specific" and, its assert compiled out in release builds, quantized the gradients
to zero, so training went on with zeroed gradients until Transformer Engine 2.19 rounds in software there
(TransformerEngine#3281). The fused Hadamard kernel fails on 12.x with "CUDA Error: invalid argument"
(TransformerEngine#2372, #2956, #3062) until 2.16 takes the unfused path there (#2968), and for grouped (MoE) layers
until 2.19 (#3265). Transformer Engine's maintainers state the same support: the full NVFP4 recipe on 10.x, on 12.x
the forward pass or training without RHT and stochastic rounding (TransformerEngine#3195). So a file that trains
with `NVFP4BlockScaling` (or a Megatron-LM launch with `--fp4-format`, which builds it with its defaults) on a 12.x
target is reported unless both `disable_rht=True` and `disable_stochastic_rounding=True` are passed, the environment
variables `NVTE_NVFP4_DISABLE_RHT` / `NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING` are named in it (which Transformer
Engine reads as their defaults), the project is Transformer Engine itself (its files run with its own tree), or
every Transformer Engine release the project declares trains what is left on: an error where the pins admit only
releases that do not, a warning where no pin says which. A switch passed as a variable is chosen at run time and not
judged; code that only runs the forward pass is not reported.

axolotl asks more of `fp8: true` than the hardware does: since 0.13.1 its config validation refuses it below
compute capability 9.0 ("fp8 requested, but fp8 is not supported on this GPU"; `compute_supports_fp8` in
src/axolotl/cli/config.py returns `compute_capability >= (9, 0)`, added by axolotl#3324), so an L4, L40S or RTX
4090 is refused too, although torchao's float8 runs there. Where the project's pins keep axolotl below 0.13.1,
the 8.9 of the hardware applies. (`fp8: true` beside `bf16: true` is not a conflict: axolotl sets Accelerate's
mixed precision to fp8 whenever `fp8` is set, `ACCELERATE_MIXED_PRECISION` in src/axolotl/utils/trainer.py, and
the bf16 weights are what torchao converts.)

All of this is about the target GPUs. Habana Gaudi, TPUs and Apple silicon have their own precision
support (Gaudi and TPUs compute natively in bf16), so for a file written for one of them the finding would be
false, which is why such files are left alone.

## Example
```yaml
# precisionlint check --gpu A100
trainer:
  precision: transformer-engine
```

## Use instead
```yaml
trainer:
  precision: bf16-mixed
```

## Fix safety
No fix: which precision replaces FP8 depends on the GPU (bf16 on Ampere, fp16 with loss scaling before it).

## References
- Transformer Engine support matrix: https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/installation.html
- Transformer Engine recipe support checks: https://github.com/NVIDIA/TransformerEngine/blob/main/transformer_engine/pytorch/quantization.py
- NVFP4 on 12.x: https://github.com/NVIDIA/TransformerEngine/pull/3281 (stochastic rounding),
  https://github.com/NVIDIA/TransformerEngine/pull/2968 and https://github.com/NVIDIA/TransformerEngine/pull/3265
  (Hadamard transform), https://github.com/NVIDIA/TransformerEngine/pull/3195 (support statement)
- PyTorch `_scaled_mm` device check: https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/cuda/Blas.cpp
- Lightning FP8 (Transformer Engine): https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
- Accelerate low-precision training: https://huggingface.co/docs/accelerate/usage_guides/low_precision_training
- CUDA GPUs and compute capabilities: https://developer.nvidia.com/cuda-gpus
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.checks._fp8_recipes import WORDS as RECIPE_WORDS
from precisionlint.core.model import Finding, Severity, Span

if TYPE_CHECKING:
    import ast

    from precisionlint.hardware.gpu import Gpu

CODE = "PL304"
NAME = "fp8-unsupported-gpu"
SEVERITY = Severity.ERROR
SUMMARY = "FP8, MXFP8 or NVFP4 training on a GPU that cannot run it (FP8 needs compute capability 8.9+)."
TARGET = "settings"
READS = "any-framework, torch, launchers"
CONFIG_WORDS: tuple[bytes, ...] = (b"--fp4-",)  # Megatron-LM launches: --fp4-format / --fp4-recipe
TREE_WORDS: tuple[str, ...] = RECIPE_WORDS  # the recipes a script builds: Transformer Engine's, torchao's
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._gpu import framework_label, instead, names, precision_settings, shown, targets

    if ctx.document.format == "python":
        yield from _recipes(ctx)
    elif ctx.document.format == "shell":
        yield from _megatron_launch(ctx)
    gpus = targets(ctx)
    without_fp8 = [g for g in gpus if not g.fp8]
    if not without_fp8 and all((g.compute_capability or (99, 0)) >= (9, 0) for g in gpus):
        return  # every target runs FP8, and axolotl's 9.0 check too
    axolotl_floor = None
    in_tests = is_test_code(ctx.document.path)
    for setting, mode in precision_settings(ctx, reached=True):
        if mode.dtype != "fp8":
            continue
        lacking = without_fp8
        if setting.framework == "axolotl":
            axolotl_floor = axolotl_floor or _axolotl_fp8_floor(ctx)
            if axolotl_floor == (9, 0):
                # axolotl's own check: below 9.0 it refuses fp8, FP8 tensor cores or not (Ada, cc 8.9)
                lacking = [g for g in gpus if not g.fp8 or (g.compute_capability or (99, 0)) < (9, 0)]
        if not lacking:
            continue
        severity = None
        needs = "without FP8 tensor cores (needs compute capability 8.9+)"
        bf16 = all(g.bf16 for g in lacking)
        if setting.framework == "accelerate":
            effect = "Accelerate warns and falls back to fp16 mixed precision"
            severity = Severity.WARNING  # the run goes on, in another precision than the config says
        elif setting.framework in ("lightning", "composer"):
            effect = "Transformer Engine refuses to run FP8 there"
        elif setting.framework == "axolotl" and axolotl_floor == (9, 0):
            needs = "below compute capability 9.0"
            effect = ("axolotl 0.13.1 and newer refuse `fp8: true` there when the config is validated (\"fp8 "
                      "requested, but fp8 is not supported on this GPU\": compute_supports_fp8 in "
                      "src/axolotl/cli/config.py asks for 9.0+)")
            if any(g.fp8 for g in lacking):
                effect += ", even on Ada GPUs, whose FP8 tensor cores torchao could use"
        else:
            effect = "FP8 matmuls need FP8 tensor cores"
        suggested = instead(setting, "bf16" if bf16 else "fp16")
        yield ctx.report(
            setting.span,
            f"FP8 ({framework_label(setting)} {shown(setting)}) on {names(lacking)}, {needs}: {effect}; use "
            f"{suggested}",
            severity=Severity.INFO if in_tests else severity,
            origin=setting.origin,
        )


def _axolotl_fp8_floor(ctx: CheckContext) -> tuple[int, int]:
    """The compute capability axolotl asks of `fp8: true`: 9.0 from 0.13.1 (axolotl#3324 added the check), 8.9
    (torchao's float8 matmuls) where the pins keep axolotl older. A project that declares no axolotl installs
    the newest, which checks."""
    declared = ctx.project.version("axolotl")
    return (8, 9) if declared is not None and declared.all_below((0, 13, 1)) else (9, 0)


def _megatron_launch(ctx: CheckContext) -> Iterator[Finding]:
    """A Megatron-LM launch script's `--fp8-format` / `--fp8-recipe` / `--fp4-format` against the target GPUs."""
    from precisionlint.checks._fp8_recipes import megatron_launch, runs_on
    from precisionlint.checks._gpu import names, targets

    launched = megatron_launch(ctx.document.text)
    if launched is None:
        return
    recipe = launched.recipe
    lacking = [g for g in targets(ctx) if not runs_on(recipe, g)]
    if not lacking:
        if recipe.label == "NVFP4":  # Megatron-LM builds NVFP4BlockScaling with its defaults (get_fp4_recipe)
            finding = _nvfp4_on_12x(ctx, targets(ctx), None, ctx.document.span_of(launched.start, launched.end),
                                    f"Megatron-LM `{launched.flag}`")
            if finding is not None:
                yield finding if not is_test_code(ctx.document.path) else finding._replace(severity=Severity.INFO)
        return
    needs = f"compute capability {recipe.lowest[0]}.{recipe.lowest[1]}+"
    if recipe.below is not None:
        needs = f"compute capability {recipe.lowest[0]}.x only (not {recipe.below[0]}.x),"
    yield ctx.report(
        ctx.document.span_of(launched.start, launched.end),
        f"{recipe.label} (Megatron-LM `{launched.flag}`) on {names(lacking)}: Megatron-LM builds Transformer "
        f"Engine's {_TE_CLASS.get(recipe.label, 'recipe')} for it, which runs on {needs} and refuses other GPUs "
        f"when training starts (\"{recipe.refusal}\"); choose a recipe every target GPU runs, or --bf16",
        severity=Severity.INFO if is_test_code(ctx.document.path) else None,
    )


_TE_CLASS = {"FP8 delayed scaling": "DelayedScaling", "FP8 current scaling": "Float8CurrentScaling",
             "FP8 block scaling": "Float8BlockScaling", "MXFP8": "MXFP8BlockScaling", "NVFP4": "NVFP4BlockScaling"}


def _recipes(ctx: CheckContext) -> Iterator[Finding]:
    """Transformer Engine recipes and torchao float8 configs built in a script, against the target GPUs."""
    from precisionlint.checks._fp8_recipes import (
        WORDS,
        asks_availability,
        constructions,
        inside_functions,
        runs_as_script,
        runs_on,
    )
    from precisionlint.checks._gpu import file_trains, names, targets
    from precisionlint.sources.positions import node_span
    from precisionlint.sources.python_index import PythonIndex

    text = ctx.document.text
    if not any(word in text for word in WORDS):
        return
    gpus = targets(ctx)
    in_tests = is_test_code(ctx.document.path)
    index = PythonIndex.of(ctx.document)
    if asks_availability(index.calls):
        return  # the file asks Transformer Engine whether the GPU runs the recipe, and decides at run time
    seen: set[str] = set()
    # A function of a module where nothing trains and that never runs as a script (no `__main__` guard) is a
    # library helper (Accelerate's convert_model_to_fp8_ao, a config's __post_init__): it builds the recipe for
    # a caller that chose FP8, and which GPU runs it is that caller's. "Nothing trains" is
    # fp16-on-bf16-capable-gpu's test for autocast regions. Test code keeps its information findings.
    library = not in_tests and not file_trains(ctx.script) and not runs_as_script(ctx.document.tree)
    helper = inside_functions(ctx.document.tree) if library else set()
    for call, name, recipe in constructions(ctx.document.tree, text, index.calls):
        lacking = [g for g in gpus if not runs_on(recipe, g)]
        if name == "NVFP4BlockScaling" and not lacking and recipe.label not in seen and id(call) not in helper \
                and file_trains(ctx.script):  # the forward pass alone runs on 12.x: only training is judged
            finding = _nvfp4_on_12x(ctx, gpus, call, node_span(ctx.document, call), "`NVFP4BlockScaling`")
            if finding is not None:
                seen.add(recipe.label)
                yield finding if not in_tests else finding._replace(severity=Severity.INFO)
            continue
        if not lacking or recipe.label in seen or id(call) in helper:
            continue
        seen.add(recipe.label)  # the first construction: one finding per format and file
        span = recipe.below
        needs = f"compute capability {recipe.lowest[0]}.{recipe.lowest[1]}+"
        if span is not None:
            needs = f"compute capability {recipe.lowest[0]}.x only (not {span[0]}.x),"
        yield ctx.report(
            node_span(ctx.document, call),
            f"{recipe.label} (`{name}`) on {names(lacking)}: {recipe.library} runs it on {needs} and refuses "
            f"other GPUs when training starts (\"{recipe.refusal}\"); choose a recipe every target GPU runs, or bf16",
            severity=Severity.INFO if in_tests else None,
        )


def _nvfp4_on_12x(ctx: CheckContext, gpus: tuple[Gpu, ...], call: ast.Call | None, span: Span,
                  written: str) -> Finding | None:
    """NVFP4 trained on compute capability 12.x with the random Hadamard transform or stochastic rounding left
    on (precisionlint.checks._fp8_recipes.nvfp4_left_on), where the project's Transformer Engine may be a
    release that does not train them there. None when no target is 12.x, both are off, or every declared
    release trains them."""
    from precisionlint.checks._fp8_recipes import nvfp4_fixed_in, nvfp4_left_on
    from precisionlint.checks._gpu import names
    from precisionlint.project.versions import show

    twelve = [g for g in gpus if g.compute_capability is not None and (12, 0) <= g.compute_capability < (13, 0)]
    if not twelve:
        return None
    if ctx.project.is_package("transformer-engine"):
        return None  # Transformer Engine's own files run with the tree they are in, not an older release
    text = ctx.document.text
    declared = ctx.project.version("transformer-engine") or ctx.project.version("transformer-engine-torch")
    grouped = "GroupedLinear" in text or (call is None and "--num-experts" in text)  # Megatron's MoE layers
    # each feature left on, with the first release that trains it on 12.x, unless every declared release does
    fixes = {feature: nvfp4_fixed_in([feature], grouped) for feature in nvfp4_left_on(call, text)}
    features = [f for f, fixed_in in fixes.items() if declared is None or not declared.all_at_least(fixed_in)]
    if not features:
        return None
    fixed = nvfp4_fixed_in(features, grouped)
    release = show(fixed)
    effects = []
    if "stochastic rounding" in features:
        effects.append("stochastic rounding of the gradients quantizes them to zero (its `cvt.rs` instruction "
                       "exists on 10.0 and 10.3 only; the run goes on, printing \"FP4 cvt.rs PTX instructions are "
                       "architecture-specific\")")
    if "RHT" in features:
        effects.append(("GroupedLinear's" if grouped else "the") + " random Hadamard transform launches a kernel "
                       "built for 10.x that fails with \"CUDA Error: invalid argument\""
                       + (f" (before {show(fixes['RHT'])})" if fixes["RHT"] != fixed else ""))
    where = f"with {declared.declared('transformer-engine')}" if declared is not None else "before " + release
    severity = Severity.ERROR if declared is not None and declared.all_below(fixed) else Severity.WARNING
    remedy = ("build it with `NVFP4BlockScaling(disable_rht=True, disable_stochastic_rounding=True)`"
              if call is not None else
              "export NVTE_NVFP4_DISABLE_RHT=1 and NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1 before the launch")
    shown_features = " and ".join("random Hadamard transform" if f == "RHT" else f for f in features)
    return ctx.report(
        span,
        f"NVFP4 ({written}, {shown_features} on) trained on {names(twelve)}: Transformer Engine runs the full "
        f"NVFP4 recipe on compute capability 10.x; on 12.x {where}, {'; '.join(effects)}; {remedy} or use "
        f"Transformer Engine {release}+",
        severity=severity,
    )
