"""## What it does
Checks that a precision value is one the framework accepts: Lightning's `precision` (in a `[trainer_config]`
table, a `trainer:` section, a top-level Lightning config, or a literal `Trainer(precision=...)` /
`Fabric(precision=...)` argument) and Accelerate's `mixed_precision`.

## Why is this bad?
Lightning 2.x accepts exactly `"transformer-engine"`, `"transformer-engine-float16"`, `"16-true"`,
`"16-mixed"`, `"bf16-true"`, `"bf16-mixed"`, `"32-true"`, `"64-true"` and the legacy `64`, `32`, `16`,
`"64"`, `"32"`, `"16"`, `"bf16"`; anything else raises `ValueError` when the `Trainer` is built, so a
typo such as `bf16_mixed` or a spelling from another framework such as `fp16` ends the job at start-up,
usually after the queue wait and the data loading. Accelerate accepts `no`, `fp16`, `bf16` and `fp8`
(case-insensitive) and raises `ValueError` on anything else.

## Example
```toml
[trainer_config]
precision = "bf16_mixed"
```

## Use instead
```toml
[trainer_config]
precision = "bf16-mixed"
```

## Fix safety
The fix replaces the value with the closest valid spelling when there is exactly one. It is unsafe: it
guesses what was meant (`fp16` could mean `16-mixed` or `16-true`; precisionlint picks the mixed form, as
Lightning's own legacy mapping does).

## References
- Lightning precision: https://lightning.ai/docs/pytorch/stable/common/precision_basic.html
- Lightning source, `lightning/fabric/connector.py` (`_PRECISION_INPUT`, `_convert_precision_to_unified_args`)
- Accelerate `Accelerator(mixed_precision=...)`: https://huggingface.co/docs/accelerate/package_reference/accelerator
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.edits import replace_value
from precisionlint.frameworks import ACCELERATE_MIXED_PRECISION, LIGHTNING_PRECISION, lightning_canonical
from precisionlint.model import Finding, Severity

CODE = "PL101"
NAME = "unknown-precision-value"
SEVERITY = Severity.ERROR
SUMMARY = "A precision value the framework rejects at start-up."
TARGET = "settings"
FIXABLE = True

_DTYPE_WORDS = {
    "fp16": "16", "float16": "16", "half": "16", "f16": "16",
    "bfloat16": "bf16", "bfloat": "bf16", "brainfloat16": "bf16",
    "fp32": "32", "float32": "32", "float": "32", "full": "32", "single": "32", "f32": "32",
    "fp64": "64", "float64": "64", "double": "64", "f64": "64",
    "amp": "16", "mixed": "16",
}
_ACCELERATE_WORDS = {
    "16": "fp16", "float16": "fp16", "half": "fp16", "16-mixed": "fp16", "fp16-mixed": "fp16",
    "bfloat16": "bf16", "bf16-mixed": "bf16",
    "none": "no", "false": "no", "fp32": "no", "32": "no", "float32": "no", "32-true": "no", "off": "no",
    "float8": "fp8", "transformer-engine": "fp8",
}


def lightning_suggestions(value: object) -> list[str]:
    text = str(value).strip().lower().replace("_", "-").replace(" ", "-")
    if lightning_canonical(text) is not None:
        return [lightning_canonical(text) or text]
    parts = [p for p in re.split(r"-+", text) if p]
    dtype = next((_DTYPE_WORDS.get(p, p) for p in parts if _DTYPE_WORDS.get(p, p) in ("16", "bf16", "32", "64")), None)
    if dtype is not None:
        kind = "true" if "true" in parts or "pure" in parts else "mixed" if "mixed" in parts or "amp" in parts else None
        if kind is None:
            kind = "mixed" if dtype in ("16", "bf16") else "true"
        candidate = f"{dtype}-{kind}"
        if candidate in LIGHTNING_PRECISION:
            return [candidate]
    if "transformer" in text or "te" == text or "fp8" in text:
        return ["transformer-engine"]
    import difflib  # only for a value that is wrong

    return difflib.get_close_matches(text, LIGHTNING_PRECISION, n=3, cutoff=0.6)


def accelerate_suggestions(value: object) -> list[str]:
    text = str(value).strip().lower().replace("_", "-")
    if text in _ACCELERATE_WORDS:
        return [_ACCELERATE_WORDS[text]]
    import difflib

    return difflib.get_close_matches(text, ACCELERATE_MIXED_PRECISION, n=3, cutoff=0.5)


def check(ctx: CheckContext) -> Iterator[Finding]:
    for setting in ctx.settings:
        if not setting.resolved:
            continue
        if setting.name == "precision" and setting.framework == "lightning":
            value = setting.value
            if lightning_canonical(value) is not None or value is None:
                continue
            if isinstance(value, float) and value.is_integer() and lightning_canonical(int(value)):
                continue  # 16.0 == 16: Lightning's membership test accepts it
            valid = "', '".join(LIGHTNING_PRECISION)
            suggestions = lightning_suggestions(value)
            yield _report(ctx, setting, suggestions, f"Lightning rejects precision {value!r} with a ValueError "
                          f"when the Trainer is built", f"valid values are '{valid}'")
        elif setting.name == "mixed_precision" and setting.framework == "accelerate":
            value = setting.value
            if isinstance(value, str) and value.lower() in ACCELERATE_MIXED_PRECISION:
                continue
            if value is None:
                continue
            suggestions = accelerate_suggestions(value)
            yield _report(ctx, setting, suggestions, f"Accelerate rejects mixed_precision {value!r} with a "
                          "ValueError", "valid values are 'no', 'fp16', 'bf16', 'fp8'")


def _report(ctx: CheckContext, setting, suggestions: list[str], problem: str, valid: str) -> Finding:
    if len(suggestions) == 1:
        hint = f"did you mean '{suggestions[0]}'?"
        fix = replace_value(ctx.document, setting, suggestions[0], f"Replace with '{suggestions[0]}'", safe=False)
    elif suggestions:
        hint = "did you mean " + " or ".join(f"'{s}'" for s in suggestions) + "?"
        fix = None
    else:
        hint = valid
        fix = None
    return ctx.report(setting.span, f"{problem}; {hint}", fix=fix)
