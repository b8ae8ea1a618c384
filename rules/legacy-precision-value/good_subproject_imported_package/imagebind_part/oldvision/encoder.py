import torch


class Encoder(torch.nn.Module):
    pass
