import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):  # no dtype on cuda: float16
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def train_explicit(model, loader, optimizer):
    for x, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        optimizer.step()


def compute_loss(model, batch):
    with torch.cuda.amp.autocast():
        return model(batch).mean()


def train_helper(model, batch, optimizer):
    loss = compute_loss(model, batch)
    pérte = loss / 2; pérte.backward()
    optimizer.step()
