# A frozen float16 reference model beside a policy trained in bf16: only the policy trains.
import torch
from transformers import AutoModelForCausalLM
from trl import DPOConfig, DPOTrainer

policy = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", torch_dtype=torch.bfloat16)
reference = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", torch_dtype=torch.float16)
trainer = DPOTrainer(model=policy, ref_model=reference, args=DPOConfig(output_dir="out", bf16=True))
trainer.train()
