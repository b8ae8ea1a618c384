import torch


def train_step(model, batch, optimizer):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(batch).mean()
    loss.backward()
    optimizer.step()


def cpu_step(model, batch):
    with torch.autocast("cpu", dtype=torch.float16):  # not a GPU region
        return model(batch)


def disabled(model, batch):
    with torch.autocast("cuda", dtype=torch.float16, enabled=False):
        return model(batch)
