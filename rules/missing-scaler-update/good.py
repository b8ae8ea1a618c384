import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def backward_and_step(self, loss):
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)

    def end_of_step(self):
        self.scaler.update()  # another method of the same class updates it


def helper_updates(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        finish_step(scaler, optimizer)  # the callee may update it


def parameter_scaler(loss, optimizer, scaler):
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # the caller updates


def two_optimizers(loss, opt_a, opt_b):
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(loss).backward()
    scaler.step(opt_a)
    scaler.step(opt_b)
    scaler.update()


def disabled(loss, optimizer):
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
