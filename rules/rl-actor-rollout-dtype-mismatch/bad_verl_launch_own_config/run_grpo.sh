#!/bin/bash
# The actor's float16 is in the project's config; the line sets the rollout engine to bfloat16.
python3 -m verl.trainer.main_ppo --config-path=config --config-name=grpo_fp16 \
    algorithm.adv_estimator=grpo \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.rollout.dtype=bfloat16 \
    trainer.n_gpus_per_node=8
