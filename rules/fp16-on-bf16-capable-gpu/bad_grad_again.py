# `torch.inference_mode(False)` leaves autograd on: this region trains, and is reported.
import torch


def train(model, loader, optimizer, scaler):
    for images, labels in loader:
        with torch.inference_mode(False):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
