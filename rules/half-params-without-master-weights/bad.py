import torch
from torch import nn, optim


def main():
    model = Net().cuda().half()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train(model, optimizer)


def bf16_groups(model: nn.Module):
    model.to(device="cuda", dtype=torch.bfloat16)
    groups = [
        {"params": model.backbone.parameters(), "lr": 1e-5},
        {"params": model.head.parameters(), "lr": 1e-3},
    ]
    return optim.SGD(groups, momentum=0.9)


class LitLike(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model.to(torch.float16)

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), eps=1e-4)
