from trl import GRPOConfig, GRPOTrainer

args = GRPOConfig(
    output_dir="Qwen2-0.5B-GRPO",
    use_vllm=True,
    vllm_dtype="bfloat16",
    fp16=True,
)
trainer = GRPOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=[], args=args, train_dataset=None)
trainer.train()
