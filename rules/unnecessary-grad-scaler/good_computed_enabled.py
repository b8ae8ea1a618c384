import torch

AMP_DTYPE = torch.bfloat16

# enabled= computed from the dtype: off for bfloat16, the right way to share one loop
scaler = torch.amp.GradScaler("cuda", enabled=AMP_DTYPE == torch.float16)
for x, y in loader:
    with torch.autocast("cuda", dtype=AMP_DTYPE):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
