import torch
from accelerate import Accelerator


def train(model, loader, optimizer, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_bf16(model, x, optimizer):
    with torch.autocast("cuda", dtype=torch.bfloat16), torch.no_grad():
        pass
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        model(x).sum().backward()


@torch.autocast("cuda", dtype=torch.bfloat16)
def decorated_step(model, x, optimizer):
    loss = model(x).sum()
    torch.autograd.backward(loss)
    optimizer.step()


accelerator = Accelerator(mixed_precision="bf16")
with accelerator.autocast():
    loss = model(batch)
    accelerator.backward(loss)


def flag(model, x, use_amp):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):
        model(x).mean().backward()
