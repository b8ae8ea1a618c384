"""One loop for AMP and plain float32: each branch does its own protocol."""
import torch
from torch.nn.utils import clip_grad_norm_


def train(model, loader, optimizer, use_amp: bool, max_norm: float | None) -> None:
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        if use_amp:
            scaler.scale(loss).backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            if max_norm is not None:
                clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()


def train_split(model, loader, optimizer, scaler=None) -> None:
    """torchvision-style: the scaler is optional and tested twice."""
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler is not None):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
