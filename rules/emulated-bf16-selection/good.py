import torch

# Native bf16 only: False on a T4 or V100.
dtype = torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16

# The compute capability is the real test.
major, _ = torch.cuda.get_device_capability()
use_bf16 = major >= 8

# Reported for what it is, not for choosing a dtype.
print("bf16 available:", torch.cuda.is_bf16_supported())

# Tests that only print or refuse are not a selection.
if torch.cuda.is_bf16_supported():
    print("Your GPU supports bfloat16, you can accelerate training with --bf16")
if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
    raise RuntimeError("Current CUDA device does not support bfloat16")


def native_bf16_only() -> torch.dtype:
    # the capability test this rule recommends, beside is_bf16_supported(): emulation is never picked
    if torch.cuda.is_bf16_supported() and torch.cuda.get_device_capability() >= (8, 0):
        return torch.bfloat16
    return torch.float16


def autocast_dtypes() -> list[torch.dtype]:
    # the dtypes a test loops over: bf16 is listed beside float16, not chosen over it
    if torch.cuda.is_bf16_supported():
        return [torch.half, torch.bfloat16]
    return [torch.half]
