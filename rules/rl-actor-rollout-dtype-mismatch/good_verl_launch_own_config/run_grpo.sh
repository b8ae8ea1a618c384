#!/bin/bash
# The fp16 RL recipe: the project's config puts the actor and the rollout engine in float16; the line sets the
# actor's float16 again.
python3 -m verl.trainer.main_ppo --config-path=config --config-name=grpo_fp16 \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.actor.fsdp_config.dtype=float16 \
    trainer.n_gpus_per_node=8
