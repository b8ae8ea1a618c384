# An example in Transformer Engine's own tree runs with that tree (2.20.dev), which trains the default NVFP4 recipe
# on compute capability 12.x.
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
