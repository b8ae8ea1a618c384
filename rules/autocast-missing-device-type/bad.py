import torch
from torch import autocast


def train(model, x):
    with torch.autocast(dtype=torch.bfloat16):
        loss = model(x).sum()
    with torch.amp.autocast(
        dtype=torch.bfloat16,
        enabled=True,
    ):
        loss = loss + model(x).sum()
    return loss


ctx = torch.autocast()


@autocast(dtype=torch.bfloat16)
def forward(model, x):
    return model(x)
