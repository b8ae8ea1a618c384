import torch
import torch as th
from torch.cuda.amp import autocast as ac, GradScaler

scaler = GradScaler()
big_scaler = torch.cuda.amp.GradScaler(2.0**10, enabled=True)

with ac(dtype=torch.float16):
    pass
with ac(True, torch.bfloat16):  # positional (enabled, dtype): named, since device_type comes first now
    pass
with th.cuda.amp.autocast():
    pass
with torch.cpu.amp.autocast(enabled=False):
    pass
cpu_scaler = torch.cpu.amp.GradScaler()


class Square(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class Cast(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x.float()


def is_scaler(obj) -> bool:
    return isinstance(obj, torch.cuda.amp.GradScaler)
