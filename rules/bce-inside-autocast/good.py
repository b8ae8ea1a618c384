import torch
import torch.nn.functional as F
from torch import nn

criterion = nn.BCELoss()


def logits_loss(model, x, y):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.binary_cross_entropy_with_logits(model(x), y)
        other = nn.BCEWithLogitsLoss()(model(x), y)
    return loss + other


def outside(model, x, y):
    with torch.autocast("cuda", dtype=torch.float16):
        prob = torch.sigmoid(model(x))
    return criterion(prob.float(), y)


def cpu(model, x, y):
    with torch.autocast("cpu"):  # CPU autocast does not ban BCE
        return F.binary_cross_entropy(torch.sigmoid(model(x)), y)


def nested_off(model, x, y):
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        with torch.autocast("cuda", enabled=False):
            return F.binary_cross_entropy(torch.sigmoid(logits.float()), y)
