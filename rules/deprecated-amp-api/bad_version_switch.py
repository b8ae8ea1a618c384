import torch
from packaging import version
from transformers.pytorch_utils import is_torch_greater_or_equal_than_1_10

# Every torch that warns (2.4 or newer) is at least 1.10: the newer versions' arm is the one that runs
scaler = torch.cuda.amp.GradScaler() if version.parse(torch.__version__) >= version.parse("1.10") else None

if version.parse(torch.__version__) < version.parse("1.6"):
    region = None
else:  # the newer versions' branch of a test for old ones
    region = torch.cuda.amp.autocast(dtype=torch.float16)


def forward_context(use_cpu_amp):
    # Transformers' flag for torch >= 1.10 (transformers.pytorch_utils): every torch that warns takes this branch
    if is_torch_greater_or_equal_than_1_10:
        context = torch.cpu.amp.autocast() if use_cpu_amp else torch.cuda.amp.autocast(dtype=torch.bfloat16)
    else:
        context = None
    return context
