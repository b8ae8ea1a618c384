# the scaler is enabled exactly when the option picks float16
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
args = parser.parse_args()
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
ptdtype = DTYPES[args.dtype]
model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda", enabled=args.dtype == "float16")
for step in range(10):
    with torch.autocast("cuda", dtype=ptdtype):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
