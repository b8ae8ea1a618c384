# LoRA: the base is frozen in bf16, the adapters PEFT adds are float32 and are all the optimizer updates.
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)
model = get_peft_model(model, LoraConfig(r=8))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
