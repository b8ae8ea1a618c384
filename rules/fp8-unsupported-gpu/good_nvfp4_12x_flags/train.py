# What compute capability 12.x trains: NVFP4 with round-to-nearest and no Hadamard transform.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import NVFP4BlockScaling

model = te.Linear(4096, 4096).cuda()
optimizer = torch.optim.AdamW(model.parameters())
recipe = NVFP4BlockScaling(disable_rht=True, disable_stochastic_rounding=True)
for x in loader:
    with te.autocast(enabled=True, recipe=recipe):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    optimizer.step()
