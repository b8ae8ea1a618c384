import torch

torch.backends.cudnn.allow_tf32 = True  # runs on every version, also next to the new API below
if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
    torch.backends.cuda.matmul.fp32_precision = "tf32"
