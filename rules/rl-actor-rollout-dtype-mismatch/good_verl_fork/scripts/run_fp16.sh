# The fork trains and samples in float16 by default; this run says so again for the rollout.
python3 -m verl.trainer.main_ppo \
    actor_rollout_ref.model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B \
    actor_rollout_ref.rollout.dtype=float16 \
    actor_rollout_ref.rollout.name=vllm
