# dtype="auto" loads what the checkpoint's config.json says: Llama 3 is published in bfloat16.
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B", dtype="auto")
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
