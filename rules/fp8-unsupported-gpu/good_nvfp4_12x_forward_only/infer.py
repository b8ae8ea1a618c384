# The forward pass of NVFP4 runs on compute capability 12.0: stochastic rounding and the Hadamard transform
# quantize gradients only, and nothing here trains.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import NVFP4BlockScaling

model = te.Linear(4096, 4096).cuda().eval()
with torch.no_grad(), te.autocast(enabled=True, recipe=NVFP4BlockScaling()):
    out = model(torch.randn(128, 4096, device="cuda", dtype=torch.bfloat16))
print(out.float().abs().mean())
