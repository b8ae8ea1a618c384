# The fork trains in float16 by default; this run puts the rollout back to bfloat16.
python3 -m verl.trainer.main_ppo \
    actor_rollout_ref.model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B \
    actor_rollout_ref.rollout.dtype=bfloat16 \
    actor_rollout_ref.rollout.name=vllm
