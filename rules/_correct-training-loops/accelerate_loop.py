"""Accelerate owns the scaler: accelerator.backward scales when mixed_precision='fp16'."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")
model, optimizer, loader = accelerator.prepare(build_model(), build_optimizer(), build_loader())

for batch in loader:
    with accelerator.autocast():
        loss = model(**batch).loss
    accelerator.backward(loss)
    accelerator.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()

with torch.autocast("cuda"):
    extra = model(**next(iter(loader))).loss
extra.backward()
optimizer.step()
