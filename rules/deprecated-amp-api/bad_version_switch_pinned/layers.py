import torch
from packaging import version

# The project needs torch 2.5 or newer: every torch it runs takes this branch
if version.parse(torch.__version__) >= version.parse("2.5"):
    from torch.cuda.amp import custom_fwd
else:
    custom_fwd = None


class Scale(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x * 2
