python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 4 --ds.param_dtype bf16 --ds.zero_stage 3
# fp16 without vLLM engines: the actor generates itself
python3 -m openrlhf.cli.train_ppo_ray --ds.param_dtype fp16 --ds.zero_stage 2
