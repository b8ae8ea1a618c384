import torch

try:
    from torch.amp import GradScaler
except ImportError:
    from torch.cuda.amp import GradScaler

if hasattr(torch, "GradScaler"):
    scaler = torch.GradScaler("cuda")
else:
    scaler = GradScaler()
