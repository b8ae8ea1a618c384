# DeepSpeed's bf16 engine keeps float32 master weights of the bf16 model it is given.
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", torch_dtype=torch.bfloat16)
args = TrainingArguments(output_dir="out", bf16=True, deepspeed="ds_zero3.json")
Trainer(model=model, args=args).train()
