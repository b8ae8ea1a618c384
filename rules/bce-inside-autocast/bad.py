import torch
import torch.nn.functional as F
from torch import nn


def train(model, x, y):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        prob = torch.sigmoid(model(x))
        loss = F.binary_cross_entropy(prob, y)
    return loss


class Module(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.criterion = nn.BCELoss()

    def step(self, x, y):
        with torch.cuda.amp.autocast():
            return self.criterion(torch.sigmoid(self.net(x)), y)

    @torch.autocast("cuda", dtype=torch.float16)
    def decorated(self, x, y):
        return nn.BCELoss()(torch.sigmoid(self.net(x)), y)


def somewhere(model, x, y, device_type):
    with torch.autocast(device_type, dtype=torch.bfloat16):
        return F.binary_cross_entropy(model(x).sigmoid(), y)
