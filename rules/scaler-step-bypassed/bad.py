import torch


def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        optimizer.step()
        scaler.update()
        optimizer.zero_grad()


def unscaled_but_bypassed(model, loss, opt, scaler):
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()  # unscaled, but an inf/NaN step is not skipped
    scaler.update()


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optim = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda", enabled=True)

    def step(self, loss, accumulate):
        self.scaler.scale(loss).backward()
        if not accumulate:
            self.optim.step()
            self.scaler.update()


def scaled_name(model, batch, optimizer, scaler):
    loss = model(batch).loss
    loss = scaler.scale(loss)
    loss.backward()
    optimizer.step()
