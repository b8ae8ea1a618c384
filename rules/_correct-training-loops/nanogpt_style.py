"""A nanoGPT-style loop: dtype chosen by a string, GradScaler enabled only for float16."""
from contextlib import nullcontext

import torch

device = "cuda"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
grad_clip = 1.0
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

model = build_model().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
scaler = torch.amp.GradScaler("cuda", enabled=(dtype == "float16"))


@torch.no_grad()
def estimate_loss():
    model.eval()
    with ctx:
        _, loss = model(*get_batch("val"))
    model.train()
    return loss.item()


X, Y = get_batch("train")
for it in range(5000):
    for micro_step in range(8):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / 8
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
