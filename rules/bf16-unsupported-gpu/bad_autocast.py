import torch


def train_step(model, batch, optimizer):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(batch).mean()
    loss.backward()
    optimizer.step()
