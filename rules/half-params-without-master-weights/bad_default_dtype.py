import torch

torch.set_default_dtype(torch.bfloat16)
model = Transformer(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
