# A Habana Gaudi training step: habana_frameworks is imported unconditionally and the HPU is the only device
# the file names, so its float16 autocast never runs on the target GPUs.
import habana_frameworks.torch.core as htcore
import torch

device = torch.device("hpu")
model = torch.nn.Linear(8, 8).to(device)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler(device.type)


def train_step(batch, device_type):
    with torch.autocast(device_type, dtype=torch.float16):
        loss = model(batch).square().mean()
    scaler.scale(loss).backward()
    htcore.mark_step()
    scaler.step(optimizer)
    scaler.update()
