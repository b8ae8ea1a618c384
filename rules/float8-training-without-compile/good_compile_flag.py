import argparse

import torch
from torchao.float8 import convert_to_float8_training

parser = argparse.ArgumentParser()
parser.add_argument("--compile", action="store_true")  # compiled when the launch asks for it
args = parser.parse_args()
model = torch.nn.Linear(4096, 4096).cuda()
convert_to_float8_training(model)
if args.compile:
    model = torch.compile(model)
loss = model(torch.randn(16, 4096, device="cuda")).sum()
loss.backward()
