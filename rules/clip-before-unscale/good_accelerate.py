import torch
from accelerate import Accelerator
from lightning.fabric import Fabric

accelerator = Accelerator(mixed_precision="fp16")
model, optimizer, loader = accelerator.prepare(torch.nn.Linear(2, 2), torch.optim.AdamW([]), [])
for batch in loader:
    accelerator.backward(model(batch).sum())
    accelerator.clip_grad_norm_(model.parameters(), 1.0)  # unscales first
    optimizer.step()

bf16 = Accelerator(mixed_precision="bf16")  # no loss scaling: a plain clip is right
for batch in loader:
    bf16.backward(model(batch).sum())
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()

fabric = Fabric(precision="16-mixed")
for batch in loader:
    fabric.backward(model(batch).sum())
    fabric.clip_gradients(model, optimizer, max_norm=1.0)  # unscales first
    optimizer.step()
