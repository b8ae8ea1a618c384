import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16", "float32"])
args = parser.parse_args()
model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters())

# Every use of the scaler is guarded, and on the path without it the autocast is off (enabled= follows the
# same option)
scaler = torch.amp.GradScaler("cuda") if args.fp16 else None
for step in range(10):
    with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    optimizer.zero_grad()

# The dtype follows the same option as the scaler: bfloat16 where there is none
half = torch.amp.GradScaler("cuda") if args.fp16 else None
for step in range(10):
    with torch.autocast("cuda", dtype=torch.float16 if args.fp16 else torch.bfloat16):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    if args.fp16:
        half.scale(loss).backward()
        half.step(optimizer)
        half.update()
    else:
        loss.backward()
        optimizer.step()

# Built exactly for float16: every other choice of the option is bfloat16 or float32
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
by_dtype = torch.amp.GradScaler("cuda") if args.dtype == "float16" else None
for step in range(10):
    with torch.autocast("cuda", dtype=DTYPES[args.dtype]):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    if by_dtype is None:
        loss.backward()
        optimizer.step()
    else:
        by_dtype.scale(loss).backward()
        by_dtype.step(optimizer)
        by_dtype.update()

# A test that says nothing of the scaler's own condition: unknown is not float16
maybe = torch.amp.GradScaler("cuda") if torch.cuda.is_available() else None
for step in range(10):
    with torch.autocast("cuda", dtype=torch.float16, enabled=torch.cuda.is_available()):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    if maybe is not None:
        maybe.scale(loss).backward()
        maybe.step(optimizer)
        maybe.update()
    else:
        loss.backward()
        optimizer.step()
