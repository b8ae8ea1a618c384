# The default dtype is bfloat16 only while the inference copy is built.
import torch

torch.set_default_dtype(torch.bfloat16)
fast = Transformer(config)
torch.set_default_dtype(torch.float32)
model = Transformer(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
