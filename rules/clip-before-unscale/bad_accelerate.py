import argparse

import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")
model, optimizer, loader = accelerator.prepare(torch.nn.Linear(2, 2), torch.optim.AdamW([]), [])
for batch in loader:
    loss = model(batch).sum()
    accelerator.backward(loss)  # scales the loss: fp16 runs a GradScaler inside Accelerate
    if accelerator.sync_gradients:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()


def train_with_option():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mixed_precision", default="fp16")
    args = parser.parse_args()
    # fp16 only when the launch keeps the default: a warning
    accel = Accelerator(mixed_precision=args.mixed_precision)
    for batch in loader:
        accel.backward(model(batch).sum())
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
        optimizer.step()
