import copy

import torch


def export(model):
    # inference copy in half precision; the optimizer trains the float32 original
    fast = copy.deepcopy(model).half().eval()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return fast, optimizer


def inputs_only(model, batch, device):
    model.to(device)
    batch = batch.to(device, torch.float16)
    return torch.optim.SGD(model.parameters(), lr=0.1)


def restored(model):
    model.half()
    calibrate(model)
    model.float()
    return torch.optim.Adam(model.parameters())


def wrapped(model):
    model.half()
    return FP16_Optimizer(torch.optim.Adam(model.parameters()), dynamic_loss_scale=True)


def unknown_dtype(model, dtype):
    model.to(dtype=dtype)
    return torch.optim.Adam(model.parameters())
