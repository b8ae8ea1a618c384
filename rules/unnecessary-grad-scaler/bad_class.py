import torch
from torch.cuda.amp import GradScaler


class Trainer:
    AMP_DTYPE = torch.bfloat16

    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = GradScaler(enabled=True)

    def loss(self, batch):
        with torch.autocast("cuda", dtype=self.AMP_DTYPE):
            return self.model(batch).mean()

    def step(self, batch):
        loss = self.loss(batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
