"""## What it does
Finds fp16 mixed precision when every target GPU has native bf16 (NVIDIA compute capability 8.0 or newer:
A100, A10, A40, RTX 30xx/40xx, L4, L40S, H100, H200, B200; AMD MI250X, MI300X). It looks at Lightning
`precision` (`"16-mixed"`, `16`, `"16"`), Transformers `fp16: true`, Accelerate `mixed_precision: fp16`,
DeepSpeed `fp16.enabled`, and in scripts `torch.autocast("cuda", dtype=torch.float16)` or
`torch.autocast("cuda")` without a dtype, which defaults to float16 on CUDA.

Nothing is reported for a file written for another accelerator, which never runs on the target GPUs: a Python
module that imports `habana_frameworks`, `optimum.habana` or `torch_xla` at its top level (not under an `if` or
`try`), an Accelerate config whose `distributed_type` is XLA, MULTI_HPU, MULTI_XPU or another non-GPU type, a
setting beside a Lightning `accelerator` of "tpu", "hpu" or "mps", and the files of the optimum-habana project
(Transformers on Habana Gaudi; its DeepSpeed configs are written for Gaudi). A file that mentions CUDA, NVIDIA
or Accelerate's MULTI_GPU anywhere keeps its findings: it may run on the target GPUs too.
Nor for a file whose name names other GPU models and none of the targets: with `--gpu V100`, a project's
`a100_config.json` is the one it runs on A100s.

## Why is this bad?
On these GPUs bf16 tensor-core matmuls have the same peak as fp16 (A100: 312 TFLOP/s for both; H100 SXM:
989). bf16 keeps float32's 8-bit exponent, so gradients neither underflow (fp16's smallest positive value is
about 6e-8; smaller gradients become zero) nor overflow (fp16 tops out at 65504). fp16 needs a GradScaler
for that: it multiplies the loss, checks every gradient for inf/NaN each step, skips the optimizer step when it
finds one, and has to be unscaled before gradient clipping. bf16-mixed needs none of it.

The trade: bf16 keeps 8 significant bits against fp16's 11, so each rounding is coarser. Under mixed
precision the weights, the optimizer update and the ops autocast keeps in float32 (softmax, norms, losses)
stay in float32, which is why bf16-mixed is the usual choice on these GPUs.

On a fleet that includes a GPU without native bf16 (V100, T4, RTX 2080 Ti), fp16 is the right choice and this
rule reports nothing. Neither does it where the Lightning strategy accepts fp16 only (ColossalAI's precision
plugin raises ValueError for anything but 16 / "16-mixed"), written as `strategy: colossalai` or as a mapping of
ColossalAIStrategy's own arguments.

An autocast region is a training choice only where something trains: the finding is a warning where the
region's outputs reach a backward in the file, information where the file trains but this region's outputs are
not seen reaching a loss (a validation pass), and there is none where nothing in the file trains (no backward,
optimizer step or GradScaler: an inference script, or a library helper applying a precision its caller chose),
nor where the region is entered only under `torch.no_grad()` or `torch.inference_mode()` (a frozen VAE encoding
the batch mid-loop), since for inference float16 keeps more mantissa bits than bf16 and has no loss to scale.
In test code the finding is information. A file whose autocast regions write both float16 and bfloat16 (a
precision helper, a script with `--fp16`/`--bf16` switches) offers both, and which runs is chosen elsewhere: its
regions are not reported.

Nor is anything reported in an RL fine-tuning file that pins both the trained policy and its rollout engine to
float16: the recipe of Qi et al., "Defeating the Training-Inference Mismatch via FP16" (arXiv 2510.26788), which
picks float16 over bf16 on bf16-capable GPUs on purpose: with 11 significant bits against bf16's 8, the
rollout engine's and the trainer's probabilities of the same tokens differ far less. Read as such: a vLLM
engine built with `dtype="float16"` (`LLM`, `EngineArgs`, `AsyncEngineArgs`) in the file that trains,
GRPOConfig's `vllm_dtype: float16` beside `fp16: true` (TRL 0.15 to 0.17, which had the option), a launch
script whose `trl vllm-serve` runs
`--dtype float16`, and the trainers whose actor and rollout dtypes rl-actor-rollout-dtype-mismatch reads (verl,
NeMo-RL, OpenRLHF), where both are float16. Where the two disagree, rl-actor-rollout-dtype-mismatch reports it.

All of this is about the target GPUs. Habana Gaudi, TPUs and Apple silicon have their own precision
support (Gaudi and TPUs compute natively in bf16), so for a file written for one of them the finding would be
false, which is why such files are left alone.

## Example
```toml
# precisionlint check --gpu A100
[trainer_config]
precision = "16-mixed"
```

## Use instead
```toml
[trainer_config]
precision = "bf16-mixed"
```

## Fix safety
Unsafe: it changes the numerics of training (a run tuned with fp16 may need its learning rate or loss-scale
settings revisited). The fix writes the same framework's bf16 spelling: Lightning `"bf16-mixed"` (`"bf16"`
where the project pins Lightning 1.x, and where it does not declare a 2.x floor the description names the
Lightning version the 2.x spelling needs), Accelerate `bf16`, `dtype=torch.bfloat16` in `torch.autocast`. For
Transformers it swaps `fp16` and `bf16` only when both keys are written in the same place (else there is no
single edit). No fix for DeepSpeed blocks (their fp16/bf16 must match TrainingArguments when used through
Transformers) or for `autocast` without a dtype. After the fix, remove the GradScaler from a script: with bf16
and float32 weights it is pure overhead, and Lightning raises if a scaler is passed together with `bf16-mixed`.

## References
- PyTorch AMP (autocast, GradScaler): https://pytorch.org/docs/stable/amp.html
- float16's range (largest 65504, smallest subnormal 2**-24, about 6e-8) against bfloat16's:
  https://docs.pytorch.org/docs/stable/type_info.html
- Lightning precision: https://lightning.ai/docs/pytorch/stable/common/precision_intermediate.html
- Lightning refuses a scaler with bf16-mixed ("`precision='bf16-mixed'` does not use a scaler"),
  `src/lightning/pytorch/plugins/precision/amp.py` lines 55-56 at 2.6.5:
  https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/pytorch/plugins/precision/amp.py#L55-L56
- ColossalAI's precision plugin accepts 16 only, `src/pytorch_lightning/plugins/precision/colossalai.py` lines
  39-41 at Lightning 1.9.0 (since moved to the lightning-colossalai package):
  https://github.com/Lightning-AI/pytorch-lightning/blob/1.9.0/src/pytorch_lightning/plugins/precision/colossalai.py#L39-L41
- TRL's `vllm_dtype`, `trl/trainer/grpo_config.py` at v0.15.0 (line 75) to v0.17.0 (line 432), gone in v0.18.0:
  https://github.com/huggingface/trl/blob/v0.17.0/trl/trainer/grpo_config.py#L432
- Qi et al., Defeating the Training-Inference Mismatch via FP16: https://arxiv.org/abs/2510.26788
- NVIDIA A100 datasheet (bf16 and fp16 peaks): https://www.nvidia.com/en-us/data-center/a100/
- NVIDIA H100 datasheet (bf16 and fp16 peaks): https://www.nvidia.com/en-us/data-center/h100/
- CUDA GPUs and compute capabilities: https://developer.nvidia.com/cuda-gpus
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Edit, Finding, Fix, Setting, Severity
from precisionlint.sources.setting_edits import render_scalar, replace_value

if TYPE_CHECKING:
    from precisionlint.checks._gpu import (
        AutocastUse,
)

CODE = "PL301"
NAME = "fp16-on-bf16-capable-gpu"
SEVERITY = Severity.WARNING
SUMMARY = "fp16 mixed precision on GPUs with native bf16: bf16 is as fast and needs no loss scaling."
TARGET = "settings"
READS = "any-framework, torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast", b"float16")  # torch.autocast(dtype=torch.float16)
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
NEEDS_GPU = True
FIXABLE = True

_BF16_SPELLING = {"lightning": "bf16-mixed", "accelerate": "bf16"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._gpu import autocast_uses, framework_label, names, precision_settings, shown, targets

    gpus = targets(ctx)
    if not gpus or not all(g.bf16 for g in gpus):
        return  # one GPU without native bf16 makes fp16 the right choice for the whole fleet
    from precisionlint.checks._rl_dtypes import is_deliberate_fp16

    if is_deliberate_fp16(ctx):
        return  # an RL recipe that trains and samples in float16 on purpose (arXiv 2510.26788)
    where = names(gpus)
    fp16_only = _fp16_only_scopes(ctx)
    # A test suite's configs and calls pick fp16 to exercise it (DeepSpeed's tests/model/*.json), not to train on
    # the target GPUs: information there, for settings as for autocast regions.
    in_tests = is_test_code(ctx.document.path)
    for setting, mode in precision_settings(ctx, reached=True):
        if mode.dtype != "fp16" or mode.kind != "mixed" or setting.scope in fp16_only:
            continue
        yield ctx.report(
            setting.span,
            f"fp16 mixed precision ({framework_label(setting)} {shown(setting)}) on {where}, which "
            f"{'has' if len(gpus) == 1 else 'all have'} native bf16: use bf16 mixed precision, as fast and "
            "without loss scaling",
            fix=_settings_fix(ctx, setting),
            severity=Severity.INFO if in_tests else None,
            origin=setting.origin,
        )
    for use in autocast_uses(ctx):
        if use.dtype != "fp16" or use.trains == "none":
            continue  # nothing in the file trains: float16 inference keeps more mantissa bits than bf16
        how = "dtype=float16" if use.explicit else "no dtype (CUDA autocast defaults to float16)"
        gpus_have = f"on {where}, which {'has' if len(gpus) == 1 else 'all have'} native bf16"
        if use.trains == "loss":
            advice = "use dtype=torch.bfloat16, as fast and without loss scaling"
            if ctx.script.has_scaler_evidence():  # only a file that scales its loss has a GradScaler to drop
                advice += " (drop the GradScaler too)"
        else:
            advice = ("if a loss computed here is trained on, dtype=torch.bfloat16 is as fast and needs no loss "
                      "scaling")
        yield ctx.report(
            use.span,
            f"torch.autocast with {how} {gpus_have}: {advice}",
            fix=_autocast_fix(ctx, use),
            severity=Severity.INFO if in_tests or use.trains != "loss" else None,
        )


def _fp16_only_scopes(ctx: CheckContext) -> set[str]:
    """Scopes whose Lightning strategy takes float16 mixed precision only (ColossalAI): bf16 is no option there."""
    from precisionlint.frameworks.lightning import FP16_ONLY_STRATEGIES

    return {s.scope for s in ctx.settings if s.framework == "lightning" and s.name == "strategy"
            and isinstance(s.value, str) and s.value.lower() in FP16_ONLY_STRATEGIES}


def _settings_fix(ctx: CheckContext, setting: Setting) -> Fix | None:
    document = ctx.document
    spelling = _BF16_SPELLING.get(setting.framework)
    if spelling is not None:
        description = f"Use {spelling!r}"
        if setting.framework == "lightning":
            # The 2.x spelling does not exist in Lightning 1.x: under a 1.x pin write the 1.x one, and where the
            # declared range allows both (or says nothing) name the version the 2.x spelling needs.
            pinned = ctx.project.version("lightning")
            if pinned is not None and pinned.all_below((2, 0)):
                spelling = "bf16"
                description = f"Use {spelling!r} (the Lightning 1.x spelling)"
            else:
                from precisionlint.checks._pins import floor_has

                _, note = floor_has(ctx, "lightning", (2, 0))
                description += f" ({note})" if note else ""
        return replace_value(document, setting, spelling, description, safe=False)
    if setting.framework != "hf" or setting.name != "fp16":
        return None
    partner = next((s for s in ctx.settings if s.name == "bf16" and s.scope == setting.scope
                    and s.framework == "hf" and s.resolved and isinstance(s.value, bool)), None)
    if partner is None:
        return None  # adding a key is not a single in-place edit
    (fp16_start, fp16_end), (bf16_start, bf16_end) = setting.value_offsets, partner.value_offsets
    edits = sorted(
        (Edit(fp16_start, fp16_end, render_scalar(document, setting, False)),
         Edit(bf16_start, bf16_end, render_scalar(document, partner, True))),
        key=lambda e: e.start,
    )
    return Fix("Set fp16 to false and bf16 to true", "unsafe", tuple(edits))


def _autocast_fix(ctx: CheckContext, use: AutocastUse) -> Fix | None:
    span = use.region.dtype_span
    if not use.explicit or span is None:
        return None
    start = ctx.document.offset(span.line, span.column)
    end = ctx.document.offset(span.end_line, span.end_column)
    text = ctx.document.text[start:end]
    # Keep whatever the module is called locally (torch, th, ...): only the attribute changes.
    for suffix in (".float16", ".half"):
        if text.endswith(suffix):
            replacement = text[: -len(suffix)] + ".bfloat16"
            return Fix("Use bfloat16", "unsafe", (Edit(start, end, replacement),))
    return None
