import torch
from packaging import version

# The project needs torch 2.5 or newer: no torch it runs takes the deprecated branch
if version.parse(torch.__version__) < version.parse("2.5"):
    from torch.cuda.amp import custom_fwd
else:
    from torch.amp import custom_fwd
