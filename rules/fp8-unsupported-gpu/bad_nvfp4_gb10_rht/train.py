# Stochastic rounding is off, but the random Hadamard transform is not: before Transformer Engine 2.16 its fused
# kernel, built for 10.x, fails on compute capability 12.1 with "CUDA Error: invalid argument".
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

model = te.Linear(2048, 2048).cuda()
optimizer = torch.optim.AdamW(model.parameters())
fp4 = recipe.NVFP4BlockScaling(disable_stochastic_rounding=True)
for x in loader:
    with te.autocast(enabled=True, recipe=fp4):
        loss = model(x).sum()
    loss.backward()
    optimizer.step()
