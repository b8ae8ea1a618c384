import torch

DTYPE = "bfloat16"
PT_DTYPE = {"float16": torch.float16, "bfloat16": torch.bfloat16}[DTYPE]

scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=PT_DTYPE):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
