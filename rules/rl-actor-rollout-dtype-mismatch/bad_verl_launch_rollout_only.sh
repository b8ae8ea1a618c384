# Only the rollout is set to float16 (the engine's dtype does not follow the actor's): verl's actor stays bfloat16.
ray job submit --address="http://127.0.0.1:8265" --runtime-env=verl/trainer/runtime_env.yaml -- \
    python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    actor_rollout_ref.rollout.dtype=float16 \
    trainer.total_epochs=15
