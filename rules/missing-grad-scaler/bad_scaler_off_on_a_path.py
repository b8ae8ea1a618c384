import argparse

import torch


def train(model, loader, optimizer, use_scaler):
    # the scaler is None when use_scaler is false, and the autocast still runs float16 on that path
    scaler = torch.amp.GradScaler("cuda") if use_scaler else None
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad()


def train_disabled(model, loader, optimizer, amp):
    # a disabled scaler is no scaler: the `else` path backpropagates a float16 loss unscaled
    scaler = torch.amp.GradScaler("cuda", enabled=amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        if amp:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


# built for the wrong dtype: on the path without it, the option's other choice picks float16
parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16"])
args = parser.parse_args()
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
scaler = torch.amp.GradScaler("cuda") if args.dtype == "bfloat16" else None
for x in range(10):
    with torch.autocast("cuda", dtype=DTYPES[args.dtype]):
        loss = torch.randn(8, device="cuda").mean()
    if scaler:
        scaler.scale(loss).backward()
        scaler.step(None)
        scaler.update()
    else:
        loss.backward()
