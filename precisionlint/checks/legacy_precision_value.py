"""## What it does
Finds Lightning 1.x precision spellings (`16`, `"16"`, `"bf16"`, `32`, `64`) and gives the 2.x value.

Frameworks: Lightning only - a `Trainer(...)`/`Fabric(...)` call resolved through the file's imports, a
`[trainer_config]` table, a Hydra `_target_` naming the Lightning Trainer, a `trainer:` mapping of Lightning
Trainer arguments beside LightningCLI's `seed_everything`/`ckpt_path` or NeMo's `exp_manager` (certain), or
such a mapping on its own (likely). Other frameworks' own spellings are never reported: `bf16` is SpeechBrain's
and Composer's normal value, and NeMo's Megatron configs (a Megatron `model:`, or NeMo's `megatron_*.yaml`)
hand `16`/`bf16` to NeMo's own precision plugin, not to Lightning. Test code (`tests/`, `test_*.py`) is not
reported: test suites exercise the legacy spellings on purpose.

## Why is this bad?
Lightning 2.x still accepts them, but maps them: `16` and `"16"` become `"16-mixed"` and `"bf16"` becomes
`"bf16-mixed"`, each with a warning at start-up; `32` and `64` become `"32-true"` and `"64-true"` silently.
The bare number hides which of two very different modes runs: `16` is mixed precision (float32 weights,
float16 autocast and loss scaling), not float16 weights (`"16-true"`). Configs written this way are usually
left over from Lightning 1.x and are read wrongly by people who assume "16 means half precision".
16 and "bf16" are warnings because Lightning warns; 32 and 64 are informational.

## Example
```yaml
trainer:
  precision: 16
```

## Use instead
```yaml
trainer:
  precision: 16-mixed
```

Where the project pins Lightning 1.x (`pytorch-lightning==1.9.5` in requirements.txt, pyproject.toml,
setup.py/setup.cfg, a conda environment file such as environment.yml, docker/environment.yml or
`<name>_env.yml`, a Dockerfile's `pip install`, requirements/*.txt, a lock file or `[tool.precisionlint]
target-versions`), or declares a floor below 2.0 (`pytorch-lightning>=1.8`: 1.8 must still run the project),
these are the right spellings and nothing is reported. The same holds where the mapping or the call also
passes an argument only Lightning 1.x accepts (`gpus`, `resume_from_checkpoint`, `weights_summary`, ...):
its reader is Lightning 1.x, which rejects the 2.x spellings.

## Fix safety
Safe when Lightning certainly reads the value and the project declares Lightning 2.0 or newer as its floor
(`lightning>=2.1` in requirements.txt, pyproject.toml, setup.py/setup.cfg, environment.yml, or
`[tool.precisionlint] target-versions`): the fix writes the exact value Lightning maps the legacy spelling to,
so training does not change. Unsafe (applied only with `--unsafe-fixes`, and the description says which
Lightning it needs) where the declared range has no floor and still allows 1.x (`pytorch-lightning<2.2`) or no
Lightning version is declared, because Lightning 1.x rejects the 2.x spelling; and where the reader is only likely
Lightning, because another reader may not accept it.

## References
- Lightning 2.0 precision changes: https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html
- Lightning source, `lightning/fabric/connector.py` (`_convert_precision_to_unified_args`)
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import certain, hedge, is_test_code
from precisionlint.checks._pins import floor_has
from precisionlint.core.model import Finding, Severity
from precisionlint.frameworks import LIGHTNING_LEGACY
from precisionlint.frameworks.lightning import one_x_arguments
from precisionlint.sources.setting_edits import replace_value

CODE = "PL102"
NAME = "legacy-precision-value"
SEVERITY = Severity.WARNING
SUMMARY = "A Lightning 1.x precision spelling; write the 2.x value (Lightning only)."
TARGET = "settings"
READS = "lightning, pins"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
FIXABLE = True


def check(ctx: CheckContext) -> Iterator[Finding]:
    if is_test_code(ctx.document.path):
        return  # test suites exercise the legacy spellings on purpose (Lightning's own tests do)
    for setting in ctx.judged_settings:
        # Only settings attributed to Lightning itself: NeMo's Megatron builder and other frameworks read
        # 16 / "bf16" as their own normal spellings.
        if setting.name != "precision" or setting.framework != "lightning" or not setting.resolved:
            continue
        value = setting.value
        if isinstance(value, bool) or not isinstance(value, (int, str)) or value not in LIGHTNING_LEGACY:
            continue
        modern = LIGHTNING_LEGACY[value]
        # The project's Lightning pin: under 1.x these are the only spellings (the 2.x ones are rejected there).
        # A declared floor below 2.0 promises that 1.x still runs the project, where 2.x spellings are rejected.
        pinned = ctx.project.version("lightning")
        if pinned is not None and (pinned.all_below((2, 0)) or pinned.admits_below((2, 0))):
            continue
        if one_x_arguments(ctx.document, setting):
            continue  # `gpus`, `resume_from_checkpoint` ... beside it: a Lightning 1.x reader
        loud = value in (16, "16", "bf16")
        where = hedge(setting, "Lightning")
        if loud:
            message = (f"legacy precision {value!r}: Lightning 2.x maps it to '{modern}' with a warning; "
                       f"write '{modern}' so the mode is explicit{where}")
        else:
            message = f"legacy precision {value!r}: Lightning 2.x reads it as '{modern}'; write '{modern}'{where}"
        # Safe only when Lightning certainly reads the value and the project's Lightning floor is 2.0: then the
        # rewrite is exactly Lightning's own mapping. Where 1.x is allowed, or no version is declared, the 2.x
        # spelling could break an install that still runs Lightning 1.x.
        has_2x, note = floor_has(ctx, "lightning", (2, 0))
        description = f"Replace with '{modern}'" + (f" ({note})" if note else "")
        fix = replace_value(ctx.document, setting, modern, description, safe=certain(setting) and has_2x)
        yield ctx.report(setting.span, message, fix=fix, severity=Severity.WARNING if loud else Severity.INFO,
                         origin=setting.origin)
