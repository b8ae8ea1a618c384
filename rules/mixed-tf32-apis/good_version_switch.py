import torch

if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
    torch.backends.cuda.matmul.fp32_precision = "tf32"
else:
    torch.backends.cuda.matmul.allow_tf32 = True

try:
    torch.backends.cudnn.conv.fp32_precision = "tf32"
except AttributeError:
    torch.backends.cudnn.allow_tf32 = True
