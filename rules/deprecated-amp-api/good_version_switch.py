import torch
from lightning.fabric.utilities.imports import _TORCH_GREATER_EQUAL_2_4
from packaging import version

# The old versions' branch: no torch that warns runs it
if version.parse(torch.__version__) < version.parse("2.4"):
    from torch.cuda.amp import custom_fwd
else:
    from torch.amp import custom_fwd

# 2.4 warns and takes the else: the test does not say which branch a torch that warns runs
if version.parse(torch.__version__) >= version.parse("2.5"):
    scaler = torch.amp.GradScaler("cuda")
else:
    scaler = torch.cuda.amp.GradScaler()

# a feature test and a string comparison (whose order is not the versions' order) are not read
if hasattr(torch, "amp"):
    region = torch.amp.autocast("cuda")
else:
    region = torch.cuda.amp.autocast()
if torch.__version__ >= "1.6":
    from torch.cuda.amp import GradScaler

# the newer versions' branch, but the file never calls what it imports: nothing warns
if version.parse(torch.__version__) >= version.parse("1.6"):
    from torch.cuda.amp import custom_bwd

# Lightning's flag for torch >= 2.4: the deprecated spelling is the older versions' branch
if _TORCH_GREATER_EQUAL_2_4:
    scaler = torch.amp.GradScaler("cuda")
else:
    scaler = torch.cuda.amp.GradScaler()
