# A precision helper that applies its caller's choice: both 16-bit types are offered, so the float16 arm is not
# the wrong choice for a GPU with native bf16 (the choice is made where mixed_precision is set).
import torch


def cast_with_native_amp(func, mixed_precision):
    if mixed_precision == "fp16":
        return torch.autocast("cuda", dtype=torch.float16)(func)
    return torch.autocast("cuda", dtype=torch.bfloat16)(func)


def train_step(model, batch, optimizer, scaler, mixed_precision):
    forward = cast_with_native_amp(model, mixed_precision)
    loss = forward(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
