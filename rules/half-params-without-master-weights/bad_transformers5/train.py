# No dtype: Transformers 5 loads the checkpoint's own dtype (bfloat16 for Qwen2.5), where 4.x loaded float32.
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
