# The fp16 RL recipe (arXiv 2510.26788): actor, reference and rollout all in float16.
python3 -m verl.trainer.main_ppo \
    actor_rollout_ref.actor.fsdp_config.dtype=float16 \
    actor_rollout_ref.ref.fsdp_config.dtype=float16 \
    actor_rollout_ref.rollout.dtype=float16 \
    actor_rollout_ref.rollout.name=vllm
# A recipe of the FP16 patch (actor.dtype) and a recipe's own entry point.
python3 -m recipe.flowrl.main_flowrl \
    actor_rollout_ref.actor.dtype=float16 \
    actor_rollout_ref.ref.dtype=float16 \
    actor_rollout_ref.rollout.dtype=float16
# A custom config: what it sets is not on the line, so the defaults are not assumed.
python3 -m verl.trainer.main_ppo --config-path=config --config-name=my_fp16 actor_rollout_ref.rollout.dtype=float16
# A shell variable: unknown.
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.fsdp_config.dtype=$DTYPE actor_rollout_ref.rollout.dtype=bfloat16
