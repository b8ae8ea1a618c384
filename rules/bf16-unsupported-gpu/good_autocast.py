import torch

scaler = torch.amp.GradScaler("cuda")


def train_step(model, batch, optimizer):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def cpu_step(model, batch):
    with torch.autocast("cpu", dtype=torch.bfloat16):  # the CPU has its own bf16 path
        return model(batch)
