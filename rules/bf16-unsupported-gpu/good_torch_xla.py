# A TPU training script: torch_xla is imported unconditionally and the XLA device is the only one the file
# names, so its bfloat16 autocast never runs on the target GPUs. (A file that also names the GPU stack, even in
# a comment, keeps its findings: see bad_xla_optional.py.)
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
model = torch.nn.Linear(8, 8).to(device)
optimizer = torch.optim.AdamW(model.parameters())


def train_step(batch):
    with torch.autocast(device.type, dtype=torch.bfloat16):
        loss = model(batch).square().mean()
    loss.backward()
    xm.optimizer_step(optimizer)
    optimizer.zero_grad()
