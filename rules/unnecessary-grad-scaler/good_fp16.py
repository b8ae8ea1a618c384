import torch

scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def mixed(model, x, optimizer, scaler):
    # one bf16 and one fp16 region feed the same scaler: it is needed
    with torch.autocast("cuda", dtype=torch.bfloat16):
        a = model.encoder(x)
    with torch.autocast("cuda"):
        b = model.decoder(a)
    scaler.scale(b.sum()).backward()
    scaler.step(optimizer)
    scaler.update()


def unknown(model, x, optimizer, amp_dtype):
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=amp_dtype):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
