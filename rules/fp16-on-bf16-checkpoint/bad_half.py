import torch
from transformers import AutoModelForCausalLM

MODEL = "meta-llama/Llama-3.1-8B"
model = AutoModelForCausalLM.from_pretrained(MODEL).cuda().half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

for batch in loader:
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
