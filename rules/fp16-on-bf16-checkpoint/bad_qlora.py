# QLoRA on a GPU without bf16: the finding is information (the activations of the 4-bit base still run in fp16).
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments

model_id = "meta-llama/Meta-Llama-3-8B"
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)
model = AutoModelForCausalLM.from_pretrained(model_id, quantization_config=bnb)
trainer = Trainer(model=model, args=TrainingArguments(output_dir="out", fp16=True))
trainer.train()
