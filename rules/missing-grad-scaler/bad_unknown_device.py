import torch


def train(model, loader, optimizer, device: torch.device):
    # The device comes from the caller: on cuda this autocast runs float16.
    for x, y in loader:
        with torch.autocast(device_type=device.type):
            loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
