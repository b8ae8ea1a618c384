"""## What it does
Finds an RL fine-tuning config whose actor (the policy being trained) computes in one 16-bit format while its
rollout engine (vLLM or SGLang, which samples the responses) runs in the other: float16 on one side, bfloat16 on
the other. It reads:

- verl (Hydra YAML, or overrides on a `python -m verl.trainer.main_ppo` line): the actor's
  `actor_rollout_ref.actor.fsdp_config.dtype` (FSDP, verl 0.6.1+), `actor_rollout_ref.actor.megatron.dtype`
  (Megatron) or `actor_rollout_ref.actor.dtype` (the FP16 patch of the paper below), against
  `actor_rollout_ref.rollout.dtype`. A side that is not written has verl's default, bfloat16, where the run uses
  verl's own config (`verl.trainer.main_ppo` without `--config-path`, or a YAML composing only `ppo_trainer` /
  `ppo_megatron_trainer`); a project that holds its own `verl/trainer/config/` (a fork) is read for its defaults.
  A launch line that names the project's own config (`--config-path DIR --config-name NAME`, DIR found from the
  launch script's folder, then the project's) and sets one side takes the other from that config where it is
  written there, else from verl's defaults when the config composes only verl's; a config that composes others
  leaves the side unknown, and nothing is reported.
- NeMo-RL: `policy.precision` against `policy.generation.vllm_cfg.precision`, both written.
- OpenRLHF: `--ds.param_dtype fp16` (`--param_dtype` in 0.9.2 to 0.10.1) on an `openrlhf.cli.train_ppo_ray` line
  with vLLM engines (`--vllm.num_engines` / `--vllm_num_engines` above 0).
- TRL: GRPOConfig's `vllm_dtype` beside `fp16=True` / `bf16=True` (in a script or a TrlParser YAML), and a launch
  script whose `trl vllm-serve --dtype` disagrees with its training line's `--fp16` / `--bf16`.

## Why is this bad?
Policy-gradient methods weight each sampled token by the ratio of the actor's probability to the probability
the rollout engine sampled it with (PPO/GRPO's importance ratio and its clipping, and the truncated importance
sampling corrections built on it). The two are computed by different kernels; in the same format they differ by
rounding, in two formats by much more: bfloat16 keeps 8 significant bits, float16 11. Qi et al., "Defeating the
Training-Inference Mismatch via FP16" (arXiv 2510.26788, 2025), measure this mismatch as the cause of unstable RL
fine-tuning and remove most of it by running both sides in float16. A run that switches one side only (the
trainer's dtype, but not the engine's) gets the mismatch of both formats at once, and the gain of neither.

What each trainer does:
- verl syncs the actor's weights into the engine after each update, cast to `rollout.dtype`
  (verl/workers/rollout/vllm_rollout/vllm_rollout.py: `weight.to(PrecisionType.to_dtype(self.config.dtype))`, "model
  parameters are in fp32 full precision"); verl's own documentation says `rollout.dtype` "should be align with the
  actor model parameter type in FSDP/Megatron backend" (docs/examples/config.rst). The actor's autocast uses
  `fsdp_config.dtype` (verl/workers/actor/dp_actor.py: `PrecisionType.to_dtype(self.config.fsdp_config.get("dtype",
  "bfloat16"))`, with a ShardedGradScaler for float16, added in verl#4036 and released in 0.6.1); Megatron reads
  `megatron.dtype` (verl/workers/megatron_workers.py). Both default to bfloat16, as does `rollout.dtype`
  (verl/trainer/config/rollout/rollout.yaml).
- NeMo-RL hands `vllm_cfg.precision` to vLLM as its dtype (nemo_rl/models/generation/vllm.py:
  `dtype=self.cfg["vllm_cfg"]["precision"]`); its example configs tie it to the policy with
  `precision: ${policy.precision}`.
- OpenRLHF writes the vLLM engines' dtype as `"dtype": "bfloat16"` (openrlhf/trainer/ray/vllm_engine.py,
  `create_vllm_engines`, every release from 0.5.0 to 0.11.0) whatever `--ds.param_dtype` says, and its weight
  sync asserts that the two agree (openrlhf/trainer/ray/vllm_worker_wrap.py: "mismatch dtype: src ..., dst ..."):
  a float16 actor stops the run at its first weight sync, after the first training step (OpenRLHF#1155, #1348).
- TRL 0.15 passes `vllm_dtype` to `LLM(..., dtype=...)` (trl/trainer/grpo_trainer.py); 0.16 and 0.17 deprecate
  and ignore it, 0.18 removed it. Today the engine's dtype is `trl vllm-serve --dtype` (server mode; default
  "auto", the checkpoint's dtype, trl/scripts/vllm_serve.py) or the checkpoint's dtype (colocate mode). A
  project whose pins allow only TRL 0.16 or newer is not reported for `vllm_dtype`.

float32 on one side is not reported (a separate trade of memory for precision), nor fp8 rollouts or "auto".

## Example
```bash
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.fsdp_config.dtype=float16 \\
    actor_rollout_ref.rollout.dtype=bfloat16
```

## Use instead
```bash
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.fsdp_config.dtype=float16 \\
    actor_rollout_ref.rollout.dtype=float16
```

## Fix safety
No fix: which of the two formats the run should use is the user's choice (float16 on both sides is the paper's
recipe and needs loss scaling; bfloat16 on both is every trainer's default).

## References
- Qi et al., Defeating the Training-Inference Mismatch via FP16: https://arxiv.org/abs/2510.26788
- verl FP16 support: https://github.com/volcengine/verl/pull/4036 (docs/examples/config.rst, `rollout.dtype`)
- https://github.com/hiyouga/EasyR1/issues/583 (the engine's dtype does not follow the actor's)
- https://github.com/OpenRLHF/OpenRLHF/issues/1155, https://github.com/OpenRLHF/OpenRLHF/pull/1348
- NeMo-RL: https://github.com/NVIDIA/NeMo-RL (examples/configs/grpo_math_1B.yaml)
- TRL GRPO and vLLM: https://huggingface.co/docs/trl/grpo_trainer
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import SAME_FILE, Finding, Related, Severity

CODE = "PL109"
NAME = "rl-actor-rollout-dtype-mismatch"
SEVERITY = Severity.WARNING
SUMMARY = "An RL run trains the actor in fp16 and samples with a bf16 rollout engine, or the reverse."
TARGET = "settings"
READS = "rl, launchers, pins"
CONFIG_WORDS: tuple[bytes, ...] = (b"fp16", b"float16")
PYTHON_WORDS: tuple[bytes, ...] = (b"fp16", b"float16")
NEEDS_PROJECT = True  # reads the project around the file: a verl checkout's defaults, TRL's pinned version


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._rl_dtypes import LABEL, mismatched, pairings, side_text

    for pairing in pairings(ctx):
        if not mismatched(pairing) or (pairing.trainer == "TRL" and _trl_ignores_vllm_dtype(ctx, pairing)):
            continue
        actor, rollout = pairing.actor, pairing.rollout
        at = rollout if rollout.span is not None else actor
        other = actor if at is rollout else rollout
        assert at.span is not None
        related = (Related(SAME_FILE, other.span, f"the {'actor' if other is actor else 'rollout'} dtype"),) \
            if other.span is not None else ()
        advice = _advice(pairing.trainer)
        yield ctx.report(
            at.span,
            f"{pairing.trainer} trains the actor in {LABEL[actor.dtype]} ({side_text(actor)}) but its rollout "
            f"engine samples in {LABEL[rollout.dtype]} ({side_text(rollout)}): the importance ratios then compare "
            f"two precisions; {advice}\n{pairing.effect}",
            related=related,
        )


def _advice(trainer: str) -> str:
    if trainer == "OpenRLHF":
        return ("OpenRLHF has no option for the engines' dtype, so train in bf16 (--ds.param_dtype bf16) unless "
                "the engines are patched to float16")
    return "give both sides the same dtype (float16 on both for the fp16 RL recipe, bfloat16 on both otherwise)"


def _trl_ignores_vllm_dtype(ctx: CheckContext, pairing: object) -> bool:
    """TRL 0.16 and newer do not hand `vllm_dtype` to vLLM: under such a pin the key decides nothing."""
    rollout = getattr(pairing, "rollout", None)
    if rollout is None or rollout.key != "vllm_dtype":
        return False
    declared = ctx.project.version("trl")
    return declared is not None and declared.all_at_least((0, 16))
