import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
args = parser.parse_args()
# the table holds float16, but no choice of the option picks it: bfloat16 or float32 only
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters())
for step in range(10):
    with torch.autocast("cuda", dtype=DTYPES[args.dtype]):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
