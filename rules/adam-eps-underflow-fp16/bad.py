import torch
from torch.optim import RMSprop


def main():
    model = Net().cuda().half()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    other = torch.optim.AdamW(model.parameters(), lr=1e-4, eps=1e-8)
    rms = RMSprop(model.parameters(), 1e-3, 0.99, 1e-9)
    ada = torch.optim.Adagrad(params=model.parameters())
    rounded = torch.optim.NAdam(model.parameters(), eps=4e-8)  # rounds up to 5.96e-8: info
    return optimizer, other, rms, ada, rounded
