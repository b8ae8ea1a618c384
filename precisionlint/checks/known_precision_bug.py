"""## What it does
Finds a config that meets a known precision bug of a library release the project may install: the project's
pins (requirements files, pyproject.toml, setup.py, ...) allow an affected release, and the config sets what
triggers the bug. The bugs are a table of data (`precisionlint/checks/_known_bugs.py`), each entry with its exact
range of affected releases, read in the library's source at those tags, and the thread that reports it:

| Package | Affected | Triggered by | Report |
|---|---|---|---|
| accelerate | 1.13.0 | `fsdp_version: 2` and `mixed_precision: bf16`/`fp16` | accelerate#3979 |
| accelerate | 1.0.0 to 1.3.0 | `mixed_precision: fp8` with `distributed_type: DEEPSPEED` | accelerate#3360 |
| deepspeed | 0.11.2 to 0.19.2 | bf16, ZeRO-2 without offload or `check_grad_overflow` | DeepSpeed#8035 |
| transformers | 4.13.0 to 4.57.6, torch 2.9+ | `tf32=` in a script writing `fp32_precision` | transformers#42371 |

A project that declares no version of the package is not reported: nothing says it installs an affected
release. A range with no upper bound (`accelerate>=1.4.0`, a library's floor) makes the finding information:
an installer picks the newest release, which has the fix, unless something else holds the package back; an
exact pin or a ceiling that keeps an affected release in reach is a warning.

## Why is this bad?
These bugs fail silently: the run starts and trains, worse than it should.

- Accelerate 1.13.0 meant to upcast FSDP2's trainable 16-bit parameters to float32 master weights under mixed
  precision, but its loop wrote `param = param.to(torch.float32)`, which rebinds the loop variable and changes no
  parameter (`src/accelerate/utils/fsdp_utils.py`); 1.12.0 upcast the whole model with `model.to(torch.float32)`
  and 1.14.0 assigns `param.data = param.data.to(torch.float32)`. A model loaded in bf16 then trains with
  bf16 weights and optimizer states.
- Accelerate's FP8 with DeepSpeed: under DeepSpeed, `AcceleratorState.mixed_precision` is read off the DeepSpeed
  config (`src/accelerate/state.py`), where `DeepSpeedPlugin.set_mixed_precision` has turned `fp8` into
  `bf16.enabled` (`src/accelerate/utils/dataclasses.py`: "When training in fp8, we still rely on bf16 autocast").
  From 1.0.0 to 1.3.0 the Accelerator's `fp8_backend` asks `self.mixed_precision == "fp8"`, which is then never
  true, so `prepare` never converts the model to Transformer Engine layers and no FP8 autocast is entered: the run
  trains in bf16 and says nothing (accelerate#3360). 1.4.0 keeps the `mixed_precision` it was given
  (accelerate#3361). 0.34.x behaved the same unless the script passed an `FP8RecipeKwargs` handler, which a config
  cannot show, so those releases are not reported.
- DeepSpeed's bf16 mode does no loss scaling, and from 0.11.2 to 0.19.2 ZeRO-1/2 did not check bf16 gradients
  for overflow by default: 0.11.2 made the check fp16-only (`if self.dtype == torch.float16: self.check_overflow()`
  in `deepspeed/runtime/zero/stage_1_and_2.py`, DeepSpeed#4512), 0.17.1 added the option
  `check_grad_overflow: bool = False` (`deepspeed/runtime/precision_config.py`, DeepSpeed#6976), and 0.19.3 made it
  True. Under ZeRO-2 a single inf in the averaged gradients makes Adam's update NaN, which corrupts its states and
  the float32 master weights at once; the report reproduced it on 0.16.9 to 0.17.1.
- Transformers' `TrainingArguments(tf32=True|False)` wrote `torch.backends.cuda.matmul.allow_tf32` (and in later 4.x
  releases `torch.backends.cudnn.allow_tf32` too) in `__post_init__`, from 4.13.0, where `tf32` appeared, to
  4.57.6, the last
  4.x release (`src/transformers/training_args.py`). PyTorch 2.9 added the `fp32_precision` settings, and reading
  TF32 state that the two APIs set differently raises `RuntimeError: ... you have used mix of the legacy and new
  APIs to set the TF32 status ...`. A script that writes `torch.backends.cuda.matmul.fp32_precision` (or another
  `fp32_precision`) and builds TrainingArguments with `tf32=` hits it in its training step (transformers#42371).
  5.0.0 writes the new API on torch 2.9+ (`enable_tf32` in `src/transformers/utils/import_utils.py`,
  transformers#42428). Reported where the project's pins allow both an affected Transformers and torch 2.9 or
  newer (a torch that nothing declares is taken to be the newest).

## Example
```yaml
# requirements.txt: accelerate==1.13.0
distributed_type: FSDP
mixed_precision: bf16
fsdp_config:
  fsdp_version: 2
```

## Use instead
```
accelerate>=1.14.0
```

## Fix safety
No fix: the pin or the config is the user's to change.

## References
- Accelerate 1.13.0, `src/accelerate/utils/fsdp_utils.py` line 740 (`param = param.to(torch.float32)`):
  https://github.com/huggingface/accelerate/blob/v1.13.0/src/accelerate/utils/fsdp_utils.py#L733-L740;
  1.12.0 line 712 (`model = model.to(torch.float32)`):
  https://github.com/huggingface/accelerate/blob/v1.12.0/src/accelerate/utils/fsdp_utils.py#L712;
  1.14.0 line 714 (`param.data = param.data.to(torch.float32)`):
  https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/utils/fsdp_utils.py#L714;
  the report: https://github.com/huggingface/accelerate/issues/3979
- Accelerate, FP8 under DeepSpeed: `fp8_backend` at 1.3.0, `accelerator.py` line 3603
  (https://github.com/huggingface/accelerate/blob/v1.3.0/src/accelerate/accelerator.py#L3600-L3604), the
  mixed precision read off the DeepSpeed config, `state.py` lines 969-976
  (https://github.com/huggingface/accelerate/blob/v1.3.0/src/accelerate/state.py#L969-L976) and `fp8` made
  `bf16.enabled`, `utils/dataclasses.py` line 1258
  (https://github.com/huggingface/accelerate/blob/v1.3.0/src/accelerate/utils/dataclasses.py#L1258); the report
  https://github.com/huggingface/accelerate/issues/3360 and the fix in 1.4.0,
  https://github.com/huggingface/accelerate/pull/3361
- DeepSpeed, the fp16-only overflow check, `stage_1_and_2.py` lines 1844-1845 at v0.16.8 (first in 0.11.2):
  https://github.com/deepspeedai/DeepSpeed/blob/v0.16.8/deepspeed/runtime/zero/stage_1_and_2.py#L1844-L1845,
  https://github.com/deepspeedai/DeepSpeed/pull/4512; the option's default, `precision_config.py` line 54 at
  v0.17.1 (False), line 56 at v0.19.2 (False) and v0.19.3 (True):
  https://github.com/deepspeedai/DeepSpeed/blob/v0.19.2/deepspeed/runtime/precision_config.py#L56,
  https://github.com/deepspeedai/DeepSpeed/blob/v0.19.3/deepspeed/runtime/precision_config.py#L56; the fix and
  the reproduction: https://github.com/deepspeedai/DeepSpeed/pull/8035
- Transformers, `tf32` writing the legacy flag, `training_args.py` lines 822 and 827 at 4.13.0 (added by
  https://github.com/huggingface/transformers/pull/14606) and lines 1845-1866 at 4.57.6:
  https://github.com/huggingface/transformers/blob/v4.57.6/src/transformers/training_args.py#L1840-L1866;
  5.0.0 calls `enable_tf32` (`training_args.py` lines 1612-1625), which writes `torch.backends.fp32_precision` on
  torch 2.9+ (`src/transformers/utils/import_utils.py` lines 528-547):
  https://github.com/huggingface/transformers/blob/v5.0.0/src/transformers/utils/import_utils.py#L528-L547;
  the report and the fix: https://github.com/huggingface/transformers/issues/42371,
  https://github.com/huggingface/transformers/pull/42428
- PyTorch's refusal to read TF32 state set through both APIs (2.9+, `aten/src/ATen/Context.cpp`) and the
  `fp32_precision` settings: https://docs.pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Severity

if TYPE_CHECKING:
    from typing import Any

CODE = "PL407"
NAME = "known-precision-bug"
SEVERITY = Severity.WARNING
SUMMARY = "A config or script meets a known precision bug of a library release that the project's pins allow."
TARGET = "settings"
READS = "accelerate, deepspeed, hf, torch, pins"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets


def check(ctx: CheckContext) -> Iterator[Finding]:
    fmt = ctx.document.format
    if fmt not in ("yaml", "json", "toml", "python"):
        return
    from precisionlint.checks._known_bugs import KNOWN_BUGS
    from precisionlint.project.versions import show
    from precisionlint.sources.tree import roots

    frameworks = {setting.framework for setting in ctx.settings}
    for bug in KNOWN_BUGS:
        if bug["framework"] not in frameworks or fmt not in bug.get("formats", ("yaml", "json", "toml")):
            continue
        declared = ctx.project.version(bug["package"])
        first, fixed = bug["affected"]
        if declared is None or declared.all_at_least(fixed) or declared.all_below(first):
            continue
        if any(_excludes(ctx, package, floor) for package, floor in bug.get("with", {}).items()):
            continue
        if fmt == "python":
            spans = _script_matches(ctx, bug)
        else:
            spans = []
            for root in roots(ctx.document.tree):
                matched = _matches(root, bug["when"])
                if matched is not None and _matches(root, bug["unless"], any_of=True) is None:
                    spans.append(ctx.document.span_of(matched.start, matched.end))
        for span in spans:
            # A range with no ceiling resolves to the newest release, which has the fix, unless something else
            # holds the package back (a library's floor, `accelerate>=1.4.0`): information. A pin or a ceiling
            # that keeps an affected release in reach is a warning.
            open_ended = declared.ceiling is None
            yield ctx.report(
                span,
                f"{declared.declared(bug['package'])} allows an affected {bug['package']} release ({show(first)} to "
                f"{bug.get('last_affected') or _before(fixed)}): {bug['what']}; {bug['instead']} ({bug['source']})",
                severity=Severity.INFO if open_ended else None,
            )


def _excludes(ctx: CheckContext, package: str, floor: tuple[int, ...]) -> bool:
    """The project's pins keep `package` below `floor` (nothing declared: the newest release, which is not)."""
    declared = ctx.project.version(package)
    return declared is not None and declared.all_below(floor)


def _script_matches(ctx: CheckContext, bug: dict[str, Any]) -> list[Any]:
    """The spans of a script's framework settings that trigger `bug`, when the script also does what its `script`
    condition names."""
    if bug.get("script") == "new-tf32-api" and ("fp32_precision" not in ctx.document.text
                                                 or not any(use.kind == "new" for use in ctx.script.tf32_uses)):
        return []
    found = []
    for setting in ctx.settings:
        values = bug["when"].get(setting.name)
        if setting.framework != bug["framework"] or values is None:
            continue
        if any(setting.value == v and type(setting.value) is type(v) for v in values):
            found.append(setting.span)
    return found


def _before(fixed: tuple[int, ...]) -> str:
    """The last affected release, as people name it: "1.13.x" before 1.14.0, "0.19.2" before 0.19.3."""
    if fixed[-1] == 0 and len(fixed) == 3:
        return f"{fixed[0]}.{fixed[1] - 1}.x"
    return ".".join(str(part) for part in (*fixed[:-1], fixed[-1] - 1))


def _value(root: Any, path: str) -> Any:
    node = root
    for key in path.split("."):
        if node is None or getattr(node, "kind", None) != "map":
            return None
        entry = node.get(key)
        node = entry.value if entry is not None else None
    return node


def _matches(root: Any, conditions: dict[str, tuple[Any, ...]], any_of: bool = False) -> Any:
    """The node of the first condition met when every one is (or, with `any_of`, when one is); None otherwise."""
    first = None
    for path, values in conditions.items():
        node = _value(root, path)
        met = node is not None and node.kind == "scalar" and any(
            node.value == v and type(node.value) is type(v) for v in values)
        if met and first is None:
            first = node
        if any_of and met:
            return node
        if not any_of and not met:
            return None
    return None if any_of else first
