import torch
from torch.cuda.amp import autocast

DEVICE = "cuda"

with torch.autocast("cuda"):
    pass
with torch.amp.autocast(device_type=DEVICE, enabled=True):
    pass
with autocast():
    pass


class Model(torch.nn.Module):
    @torch.autocast(device_type=torch.device("cuda:0").type)
    def forward(self, x):
        return x
