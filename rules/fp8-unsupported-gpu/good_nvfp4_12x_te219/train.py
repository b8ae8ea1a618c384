# The default NVFP4 recipe on compute capability 12.1 with Transformer Engine 2.19 or newer, which rounds the
# gradients in software there (TransformerEngine#3281) and takes the unfused Hadamard path.
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
