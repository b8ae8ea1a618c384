import deepspeed
import torch

model = Net().half()
optimizer = torch.optim.AdamW(model.parameters())
engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config="ds.json")
