import torch

with torch.autocast("cuda")
    loss = model(x)
