import torch
from packaging import version

# Every torch that warns (2.4 or newer) is at least 1.10: the newer versions' arm is the one that runs
scaler = torch.cuda.amp.GradScaler() if version.parse(torch.__version__) >= version.parse("1.10") else None

if version.parse(torch.__version__) < version.parse("1.6"):
    region = None
else:  # the newer versions' branch of a test for old ones
    region = torch.cuda.amp.autocast(dtype=torch.float16)
