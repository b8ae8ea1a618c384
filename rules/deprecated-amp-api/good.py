import torch
from torch.amp import GradScaler, autocast

try:
    from torch.amp import custom_fwd
except ImportError:  # torch < 2.4
    from torch.cuda.amp import custom_fwd

if torch.__version__ >= "2.4":
    make_scaler = torch.amp.GradScaler
else:
    make_scaler = torch.cuda.amp.GradScaler

scaler = GradScaler("cuda")
with autocast("cuda", dtype=torch.float16):
    pass
with torch.autocast("cpu"):
    pass


class Square(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, x):
        return x * x

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        return grad
