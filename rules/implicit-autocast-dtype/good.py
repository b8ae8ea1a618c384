import functools

import torch

with torch.autocast("cuda", dtype=torch.float16):
    pass
with torch.autocast("cpu"):  # cpu: bfloat16 by default, and no GradScaler question
    pass
with torch.autocast("cuda", enabled=False):
    pass


def run(device: torch.device):
    with torch.autocast(device.type):  # the device is the caller's
        pass


amp_ctx = functools.partial(torch.autocast, device_type="cuda")  # the dtype may come at the call
