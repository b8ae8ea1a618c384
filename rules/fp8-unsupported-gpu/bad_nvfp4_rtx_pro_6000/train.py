# NVFP4BlockScaling() leaves stochastic rounding of the gradients on; on compute capability 12.0 Transformer Engine
# 2.18 has no cvt.rs instruction to run it and quantizes the gradients to zero.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import NVFP4BlockScaling

model = te.Linear(4096, 4096).cuda()
optimizer = torch.optim.AdamW(model.parameters())
recipe = NVFP4BlockScaling()
for x in loader:
    with te.autocast(enabled=True, recipe=recipe):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
