import torch
from torch.cuda import amp
from torch.cuda.amp import custom_fwd, custom_bwd


class Identity(torch.autograd.Function):
    @staticmethod
    @custom_fwd
    def forward(ctx, x):
        return x

    @staticmethod
    @custom_bwd
    def backward(ctx, grad):
        return grad


def train_step(model, x, optimizer, scaler=amp.GradScaler()):
    with amp.autocast(
        enabled=True,
    ):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
