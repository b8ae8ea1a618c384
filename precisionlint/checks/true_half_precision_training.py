"""## What it does
Finds Lightning's "true" half precision: `precision: "16-true"` (warning) or `"bf16-true"` (info), in Lightning
and NeMo configs and literal `Trainer(...)`/`Fabric(...)` calls.

It stays quiet where no CUDA half-precision training happens: an accelerator other than `gpu`/`cuda`/`auto` in
the same Trainer (Graphcore IPUs, HPUs, TPUs, a custom accelerator object), explicit loss scaling configured in
the file (Graphcore's `loss_scaling`), test code (`tests/`, `test_*.py`), inference, evaluation and export
configs and scripts, and scripts that never call `fit()` or Fabric's `backward()`. torchtune's `dtype: bf16` is
its designed full-bf16 training and is not reported.

## Why is this bad?
With `-true`, Lightning casts the weights themselves to 16 bits, so the optimizer updates half-precision
weights and keeps half-precision state; there is no float32 master copy. An update smaller than half the
spacing between two representable values is rounded away: bfloat16 has 8 bits of significand, so an update
below about 0.4% of a weight's magnitude (2**-8) is lost; float16 keeps 11 bits (2**-11) but
also overflows above 65504 and underflows below about 6e-8, with no loss scaling under `16-true`. Long training
runs stall or diverge where `"bf16-mixed"` / `"16-mixed"` would not. It suits inference, or fine-tuning a model too
large for float32 weights when the learning rate and optimizer (e.g. Kahan summation, stochastic rounding)
are chosen for it; float16-true is a warning because it is the least forgiving.

## Example
```yaml
trainer:
  precision: bf16-true
```

## Use instead
```yaml
trainer:
  precision: bf16-mixed
```

## Fix safety
No fix: switching to mixed precision doubles the weight memory, which may not fit.

## References
- Lightning "true half precision": https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
- Micikevicius et al., Mixed Precision Training (float32 master weights): https://arxiv.org/abs/1710.03740
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import hedge, is_test_code
from precisionlint.core.model import Document, Finding, Severity
from precisionlint.core.patterns import lazy_pattern
from precisionlint.frameworks import precision_mode

CODE = "PL107"
NAME = "true-half-precision-training"
SEVERITY = Severity.WARNING
SUMMARY = "Lightning trains half-precision weights with no float32 master copy (16-true, bf16-true)."
TARGET = "settings"
READS = "lightning, nemo"

# Frameworks whose "true" half precision is this rule's subject. torchtune trains in bf16 by design (its recipes
# choose optimizers for it) and is not reported.
_FRAMEWORKS = frozenset({"lightning", "nemo"})
# Accelerators where CUDA's float16 rules do not apply (Graphcore IPUs, Habana HPUs, TPUs, the CPU, Apple MPS).
_CUDA_ACCELERATORS = frozenset({"gpu", "cuda", "auto"})
# Explicit loss scaling configured somewhere in the file (Graphcore's `loss_scaling`, a custom scaler).
_LOSS_SCALING = lazy_pattern(globals(), "_LOSS_SCALING", r"loss[_ -]?scal|lossScaling", re.IGNORECASE)
_LOWERED_LOSS_SCALING = lazy_pattern(globals(), "_LOWERED_LOSS_SCALING", r"loss[_ -]?scal")  # ASCII text, lowered
# Code and configs that train nothing: tests, inference, evaluation, export.
_NOT_TRAINING_FOLDERS = frozenset({"inference", "serving", "deploy", "benchmarks"})
_NOT_TRAINING_WORDS = ("infer", "predict", "eval", "export", "serve", "generat", "quantiz", "ptq")  # in a file's name


def check(ctx: CheckContext) -> Iterator[Finding]:
    if _trains_nothing(ctx.document) or _mentions_loss_scaling(ctx.document.text):
        return
    accelerators = {s.scope: s for s in ctx.settings if s.name == "accelerator"}
    for setting in ctx.settings:
        if setting.name != "precision" or setting.framework not in _FRAMEWORKS:
            continue
        mode = precision_mode(setting)
        if mode is None or mode.kind != "true" or mode.dtype not in ("fp16", "bf16"):
            continue
        accelerator = accelerators.get(setting.scope)
        if accelerator is not None and (not accelerator.resolved or str(accelerator.value).lower()
                                        not in _CUDA_ACCELERATORS):
            continue  # an IPU, HPU, TPU or custom accelerator object: not CUDA float16 training
        where = hedge(setting, "Lightning")
        if mode.dtype == "fp16":
            yield ctx.report(
                setting.span,
                f"precision={setting.value!r} trains float16 weights with no float32 master copy and no loss scaling: "
                f"small updates round away and gradients under/overflow; use '16-mixed' or 'bf16-mixed' for "
                f"training{where}",
            )
        else:
            yield ctx.report(
                setting.span,
                f"precision={setting.value!r} keeps weights and optimizer state in bfloat16 with no float32 master "
                f"copy: updates below ~0.4% of a weight are rounded away; use 'bf16-mixed' unless memory forces "
                f"this{where}",
                severity=Severity.INFO,
            )


def _mentions_loss_scaling(text: str) -> bool:
    """_LOSS_SCALING.search(text); compiled only where an ASCII text holds "scal" in any case (both of its choices
    do), not at every start. An ASCII text is searched lowered, for the lowered pattern without case folding (the
    same matches: on ASCII letters case folding is lowering, and `lossscaling` is `loss[_ -]?scal` with no
    separator): a pattern that starts with a literal is searched for that literal first, where a case-folded one
    is tried at every position (3 times slower over the Python files of four real repositories)."""
    if text.isascii():
        lowered = text.lower()
        return "scal" in lowered and _LOWERED_LOSS_SCALING.search(lowered) is not None
    return _LOSS_SCALING.search(text) is not None


def _trains_nothing(document: Document) -> bool:
    if is_test_code(document.path):
        return True
    parts = document.path.replace("\\", "/").lower().split("/")
    if any(part in _NOT_TRAINING_FOLDERS for part in parts[:-1]) or any(
            word in parts[-1] for word in _NOT_TRAINING_WORDS):
        return True
    # A script that builds a Trainer but never calls fit() (nor Fabric's backward()) trains nothing with it.
    return document.format == "python" and ".fit(" not in document.text and ".backward(" not in document.text
