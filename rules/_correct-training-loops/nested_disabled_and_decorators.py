"""Autocast turned off inside a region, and autocast as a decorator."""
import torch
import torch.nn.functional as F
from torch import autocast, nn


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(64, 1)
        self.bce = nn.BCELoss()

    @autocast("cuda", dtype=torch.bfloat16)
    def forward(self, x):
        return self.proj(x)

    @torch.autocast(device_type="cuda", enabled=False)
    def probability_loss(self, logits, target):
        # float32 on purpose: BCE is banned under autocast, so autocast is switched off here
        return self.bce(torch.sigmoid(logits.float()), target)


def step(model, head, x, y, optimizer):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        features = model(x)
        logits = head(features)
        with torch.autocast("cuda", enabled=False):
            loss = F.binary_cross_entropy(torch.sigmoid(logits.float()), y)
            extra = head.probability_loss(logits, y)
    (loss + extra).backward()
    optimizer.step()
    optimizer.zero_grad()


class Sum(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, a, target):
        ctx.save_for_backward(a)
        return F.binary_cross_entropy(a, target)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a, None
