"""A hand-written training loop with the protocol mistakes precisionlint looks for."""

import torch
from torch.cuda.amp import GradScaler, autocast

model = torch.nn.Linear(1024, 1024).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = GradScaler()


def train(loader):
    for inputs, targets in loader:
        optimizer.zero_grad()
        with autocast():
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)


def evaluate(loader):
    with torch.autocast(dtype=torch.float16):
        return [model(x) for x, _ in loader]
