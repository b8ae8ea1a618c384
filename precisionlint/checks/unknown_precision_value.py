"""## What it does
Checks that a precision value is one the framework reading the file accepts, in that framework's own words:

- Lightning (`Trainer`, `Fabric`, the `[trainer_config]` table) `precision`: `transformer-engine`,
  `transformer-engine-float16`, `16-true`, `16-mixed`, `bf16-true`, `bf16-mixed`, `32-true`, `64-true`, and the
  legacy `16`, `32`, `64`, `"bf16"`;
- NeMo Megatron configs, `trainer.precision`: Lightning's (NeMo's builder takes `16`/`bf16`/`*-mixed` itself and
  hands the rest to Lightning);
- Accelerate `mixed_precision`: `no`, `fp16`, `bf16`, `fp8` (any case);
- MosaicML Composer / llm-foundry `precision`: `fp32`, `amp_fp16`, `amp_bf16`, `amp_fp8`;
- SpeechBrain hparams `precision`, `eval_precision`: `fp32`, `fp16`, `bf16`;
- GPT-NeoX `precision`: `fp16`, `fp32`, `bfloat16`;
- torchtune `dtype`: `bf16`, `fp32`, `fp16`, `fp64`;
- MMEngine `AmpOptimWrapper` `dtype`: `float16`, `bfloat16`, `float32`, `float64`;
- axolotl `bf16` (also `auto`), `fp16`, `fp8`, `tf32`; fairseq `common.fp16`, `common.bf16`; Detectron2
  `SOLVER.AMP.ENABLED`: booleans.

A file is checked only once its reader is identified from evidence, never from the value alone (see
"How a file is attributed" in the README, and `precisionlint check --show-frameworks FILE`): a Hydra
`_target_: lightning.pytorch.Trainer`, LightningCLI's `seed_everything` beside `trainer:`, Composer's
`max_duration`, HyperPyYAML tags building `speechbrain.` objects, `_component_: torchtune.`, an import that
resolves `Trainer(...)` to Lightning, and so on. Values that are filled in later (`${...}` interpolations,
`!ref <...>` tags, variables) are not checked.

## Why is this bad?
Each of these frameworks refuses an unknown value when the job starts, usually after the queue wait and the
data loading: Lightning and Composer raise `ValueError` when the Trainer is built, Accelerate when the
`Accelerator` is created, SpeechBrain in `AMPConfig.from_name`, torchtune in `training.get_dtype`, MMEngine's
`AmpOptimWrapper` fails an assertion, GPT-NeoX's argument validation rejects it, and axolotl (pydantic),
fairseq (OmegaConf) and Detectron2 (yacs) refuse a value of the wrong type. A spelling from another framework
(`fp16` in a Lightning config, `bf16-mixed` in a SpeechBrain one) is the usual cause.

## Example
```yaml
# an llm-foundry run config: Composer spells bf16 autocast amp_bf16
max_duration: 800ba
global_train_batch_size: 256
precision: amp_bfloat16
```

## Use instead
```yaml
max_duration: 800ba
global_train_batch_size: 256
precision: amp_bf16
```

## Fix safety
The fix replaces the value with the one spelling of the same framework that keeps the number format written
(`amp_bfloat16` -> `amp_bf16`, `bf16_mixed` -> `bf16-mixed`, never a bf16 value into an fp16 one). It is unsafe:
it guesses what was meant (`fp16` could mean `16-mixed` or `16-true`; the mixed form is chosen, as Lightning's own
legacy mapping does). It is offered only when the reader is certain; where the attribution is only likely (a
`trainer:` mapping of Lightning Trainer arguments with nothing naming Lightning) the finding is a warning with no
fix. A value that names no dtype (`mixed`) gets the list of valid values, not a guess. For Lightning the
suggestion follows the project's declared version: under a Lightning 1.x pin the 1.x value (`bf16_mixed` ->
`bf16`), otherwise the 2.x one, and where no 2.x floor is declared the fix's description names the Lightning
version it needs.

## References
- Lightning: `lightning/fabric/connector.py` (`_PRECISION_INPUT`, `_convert_precision_to_unified_args`);
  https://lightning.ai/docs/pytorch/stable/common/precision_basic.html
- Accelerate: `accelerate/utils/dataclasses.py` (`PrecisionType`)
- Composer: `composer/core/precision.py` (`Precision`: FP32, AMP_FP16, AMP_BF16, AMP_FP8)
- SpeechBrain: `speechbrain/core.py` (`AMPConfig.from_name`: "Specified autocast mode ... incorrect")
- GPT-NeoX: `megatron/neox_arguments/neox_args.py` (`NeoXArgsModel.precision: Literal["fp16", "fp32", "bfloat16"]`)
- torchtune: `torchtune/training/precision.py` (`PRECISION_STR_TO_DTYPE`, `get_dtype`)
- MMEngine: `mmengine/optim/optimizer/amp_optimizer_wrapper.py` (`AmpOptimWrapper.valid_dtypes`)
- NeMo: `nemo/collections/nlp/parts/megatron_trainer_builder.py` (`MegatronTrainerBuilder._plugins`)
- axolotl: `axolotl/utils/schemas/config.py` (`bf16: Literal["auto"] | bool | None`, `fp16`, `fp8`, `tf32`)
- Detectron2: `detectron2/config/defaults.py` (`_C.SOLVER.AMP.ENABLED`); fairseq: `fairseq/dataclass/configs.py`
  (`CommonConfig.fp16`, `bf16`)
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import certain, hedge
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Setting, Severity
from precisionlint.frameworks import setting_vocabulary
from precisionlint.sources.setting_edits import replace_value

if TYPE_CHECKING:
    from typing import Any

CODE = "PL101"
NAME = "unknown-precision-value"
SEVERITY = Severity.ERROR
SUMMARY = "A precision value its reader rejects at start-up, in that framework's words (11 frameworks)."
TARGET = "settings"
READS = "lightning, nemo, accelerate, composer, speechbrain, neox, torchtune, mmengine, axolotl, detectron2, fairseq"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    for setting in ctx.offered_settings:
        if not setting.resolved or setting.value is None:
            continue
        vocabulary = setting_vocabulary(setting)
        if vocabulary is None or vocabulary.accepts(setting.value):
            continue
        yield _report(ctx, setting)


def _report(ctx: CheckContext, setting: Setting) -> Finding:
    vocabulary = setting_vocabulary(setting)
    assert vocabulary is not None
    value = setting.value
    suggestions = vocabulary.suggestions(value)
    note = ""
    if setting.framework == "lightning" and suggestions:
        suggestions, note = _lightning_for_pins(ctx, suggestions)
    problem = f"{vocabulary.title} rejects {vocabulary.key} {_shown(value, setting.format)}: it {vocabulary.rejection}"
    fix = None
    fmt = setting.format
    if len(suggestions) == 1:
        hint = f"did you mean {_shown(suggestions[0], fmt)}?"
        if certain(setting):  # never rewrite a value for a framework that may not be the one reading it
            description = f"Replace with {suggestions[0]!r}" + (f" ({note})" if note else "")
            fix = replace_value(ctx.document, setting, suggestions[0], description, safe=False)
    elif suggestions:
        hint = "did you mean " + " or ".join(_shown(s, fmt) for s in suggestions) + "?"
    else:
        hint = "valid values are " + ", ".join(_shown(v, fmt) for v in vocabulary.accepted)
    severity = Severity.ERROR if certain(setting) else Severity.WARNING
    return ctx.report(setting.span, f"{problem}; {hint}{hedge(setting, vocabulary.title)}", fix=fix,
                      severity=severity, origin=setting.origin)


# Lightning 2.x spellings and the Lightning 1.x value that means the same (absent: none in 1.x).
_LIGHTNING_1X = {"16-mixed": "16", "bf16-mixed": "bf16", "32-true": "32", "64-true": "64"}


def _lightning_for_pins(ctx: CheckContext, suggestions: list[Any]) -> tuple[list[Any], str]:
    """Suggestions in the spelling of the Lightning the project declares: under a 1.x pin the 1.x values
    (2.x-only modes dropped); otherwise the 2.x values, with a note for the fix where 1.x is not ruled out."""
    pinned = ctx.project.version("lightning")
    if pinned is not None and pinned.all_below((2, 0)):
        older = [_LIGHTNING_1X.get(s, s) if isinstance(s, str) else s for s in suggestions]
        return [s for s in dict.fromkeys(older) if not (isinstance(s, str) and "-" in s)], ""
    from precisionlint.checks._pins import floor_has

    _, note = floor_has(ctx, "lightning", (2, 0))  # every value Lightning's vocabulary suggests is a 2.x one
    return suggestions, note


def _shown(value: object, fmt: str) -> str:
    """A value as the user would write it: true/false in configs, True/False in Python, strings quoted."""
    if isinstance(value, bool) and fmt != "python":
        return "true" if value else "false"
    return repr(value)
