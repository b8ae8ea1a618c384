import functools

import torch

AMP = {"device_type": "cuda", "dtype": torch.bfloat16}

with torch.autocast("cuda", dtype=torch.bfloat16):
    pass
with torch.amp.autocast(device_type="cpu"):
    pass
with torch.cuda.amp.autocast():  # the deprecated CUDA spelling takes no device (see deprecated-amp-api)
    pass
with torch.autocast(**AMP):
    pass
amp_autocast = functools.partial(torch.autocast, dtype=torch.bfloat16)  # the device comes at the call
with amp_autocast("cuda"):
    pass
