# The file asks Transformer Engine whether the GPU runs MXFP8 and skips it where it does not.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling
from transformer_engine.pytorch.quantization import FP8GlobalStateManager

recipes = {"bf16": None, "mxfp8": MXFP8BlockScaling()}
mxfp8_available, reason = FP8GlobalStateManager.is_mxfp8_available()
model = te.Linear(4096, 4096).cuda()
for name, recipe in recipes.items():
    if name == "mxfp8" and not mxfp8_available:
        print(f"Skipping MXFP8: {reason}")
        continue
    with te.autocast(enabled=recipe is not None, recipe=recipe):
        out = model(torch.randn(128, 4096, device="cuda"))
    out.sum().backward()
