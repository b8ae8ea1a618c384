import torch
from accelerate import Accelerator

# the precision is picked by the hardware: bf16 only where the GPU has it
accelerator = Accelerator(mixed_precision="bf16" if torch.cuda.is_bf16_supported() else "fp16")


def wrap(hyperparams):
    # bf16 only on the FP8 recipe's branch, which this GPU cannot run anyway
    mixed_precision = "bf16" if hyperparams.recipe == "mxfp8" else hyperparams.mixed_precision
    return Accelerator(mixed_precision=mixed_precision)
