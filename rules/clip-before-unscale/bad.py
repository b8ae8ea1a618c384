import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def train_fsdp(module, loader, optimizer):
    model = FSDP(module)
    scaler = ShardedGradScaler()
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).sum()
        scaler.scale(loss).backward()
        model.clip_grad_norm_(1.0)  # FSDP's clip does not unscale either
        scaler.step(optimizer)
        scaler.update()


class Runner:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, loss):
        self.scaler.scale(loss).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)  # café: the norm is scaled too
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return grad_norm
