import torch
import torch as th

scaler = torch.amp.GradScaler("cuda")


def train_step(model, batch, optimizer):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def evaluate(model, batch):
    with torch.autocast(device_type="cuda"):  # no dtype: float16 on CUDA
        return model(batch)


def predict(model, batch):
    with th.autocast("cuda", dtype=th.half):
        return model(batch)
