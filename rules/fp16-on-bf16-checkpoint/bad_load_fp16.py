import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("google/gemma-3-1b-it", torch_dtype=torch.float16)
trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"))
trainer.train()
