"""## What it does
Finds contradictory precision switches in one source:
- Hugging Face `TrainingArguments` with `fp16` and `bf16` both true (or `fp16_full_eval` and
  `bf16_full_eval`);
- a DeepSpeed config with both the `fp16` and the `bf16` (or old `bfloat16`) block enabled;
- a DeepSpeed config with an enabled leftover `amp` block next to an enabled `fp16` or `bf16` block;
- `TrainingArguments` whose embedded DeepSpeed config says the opposite about fp16 or bf16.

`"auto"` is never a conflict: it is the Hugging Face integration's way of saying "take it from
TrainingArguments".

Frameworks: Transformers `TrainingArguments` (YAML/JSON with its keys, TRL configs, LLaMA-Factory YAML, literal
`TrainingArguments(...)`/`SFTConfig(...)` calls) and DeepSpeed configs (also the DeepSpeed blocks embedded in a
TrainingArguments file, an Accelerate `deepspeed_config:` or a GPT-NeoX config) - the readers whose refusal is
verified in their source. Other frameworks with both flags (axolotl, fairseq) are not reported. A file whose reader
is only likely (three TrainingArguments keys, DeepSpeed-shaped blocks with no other DeepSpeed key) gets a warning.

## Why is this bad?
None of these runs. `TrainingArguments` raises `ValueError("At most one of fp16 and bf16 can be True,
but not both")`; DeepSpeed asserts "bfloat16 and fp16 modes cannot be simultaneously enabled"; an enabled
`amp` block (NVIDIA apex AMP, which DeepSpeed still runs on its own) cannot be combined with its fp16/bf16
modes (`NotImplementedError: Cannot enable both amp with (legacy) fp16 or bfloat16 mode`, or under ZeRO the
assertion "Amp and ZeRO are not currently compatible"); the Hugging Face
DeepSpeed integration raises a `ValueError` listing every mismatch between `TrainingArguments` and the
DeepSpeed config. Each of these fails at start-up, after the queue wait.

## Example
```json
{
  "fp16": {"enabled": true},
  "bf16": {"enabled": true}
}
```

## Use instead
```json
{
  "fp16": {"enabled": false},
  "bf16": {"enabled": true}
}
```
or, under the Hugging Face Trainer, `"enabled": "auto"` in both blocks.

## Fix safety
No fix: which of the two was meant is the author's decision.

## References
- transformers `TrainingArguments.__post_init__`: https://github.com/huggingface/transformers/blob/main/src/transformers/training_args.py
- transformers DeepSpeed integration (`HfTrainerDeepSpeedConfig.trainer_config_process`)
- DeepSpeed config: https://www.deepspeed.ai/docs/config-json/#fp16-training-options
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import at_most_warning, hedge
from precisionlint.core.model import Finding, Setting, Severity

CODE = "PL105"
NAME = "conflicting-precision"
SEVERITY = Severity.ERROR
SUMMARY = "fp16 and bf16 (or a leftover amp block) both on: TrainingArguments or DeepSpeed refuses to start."
TARGET = "settings"
READS = "hf, deepspeed"

_PAIRS = (("fp16", "bf16"), ("fp16_full_eval", "bf16_full_eval"))
# The readers whose refusal is verified in their source: TrainingArguments' __post_init__ and DeepSpeed's config
# assertion (also for the DeepSpeed blocks of a GPT-NeoX or Accelerate config).
_WHO = {"hf": "TrainingArguments", "deepspeed": "DeepSpeed"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    by_scope: dict[str, dict[str, Setting]] = {}
    for setting in ctx.settings:
        if setting.framework in _WHO:
            by_scope.setdefault(setting.scope, {})[setting.name] = setting
    for named in by_scope.values():
        for first, second in _PAIRS:
            a, b = named.get(first), named.get(second)
            if a is not None and b is not None and a.value is True and b.value is True:
                where = _WHO[a.framework]
                yield ctx.report(
                    b.span,
                    f"{first} and {second} are both enabled ({a.key_text} at line {a.span.line}); {where} "
                    f"refuses to start. Enable one of them{hedge(b, where)}",
                    severity=at_most_warning(b, Severity.ERROR),
                )
        amp = named.get("amp")
        if amp is not None and amp.value is True:
            for other in ("fp16", "bf16"):
                peer = named.get(other)
                if peer is not None and peer.value is True:
                    yield ctx.report(
                        amp.span,
                        f"a leftover DeepSpeed 'amp' block is enabled next to {peer.key_text} (line "
                        f"{peer.span.line}): DeepSpeed cannot combine apex AMP with its own {other} mode and "
                        f"refuses to start. Remove the 'amp' block{hedge(amp, 'DeepSpeed')}",
                        severity=at_most_warning(amp, Severity.ERROR),
                    )
                    break
    # TrainingArguments against its embedded DeepSpeed config: each must match or be "auto".
    hf = by_scope.get("hf", {})
    ds = by_scope.get("hf.deepspeed", {})
    for name in ("fp16", "bf16"):
        outer, inner = hf.get(name), ds.get(name)
        if outer is None or inner is None or inner.value == "auto" or outer.value == "auto":
            continue
        if isinstance(outer.value, bool) and isinstance(inner.value, bool) and outer.value != inner.value:
            yield ctx.report(
                inner.span,
                f"the DeepSpeed config sets {inner.key_text}={_js(inner.value)} but TrainingArguments sets "
                f"{name}={_js(outer.value)} (line {outer.span.line}); the Hugging Face integration raises on the "
                f'mismatch. Use "auto" in the DeepSpeed config{hedge(outer, "TrainingArguments")}',
                severity=at_most_warning(outer, Severity.ERROR),
            )


def _js(value: object) -> str:
    return "true" if value is True else "false" if value is False else repr(value)
