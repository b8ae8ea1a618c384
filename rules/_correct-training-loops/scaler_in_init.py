"""A trainer class: the GradScaler lives on self and is used by other methods."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, use_fp16: bool) -> None:
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.criterion = nn.CrossEntropyLoss()
        self.dtype = torch.float16 if use_fp16 else torch.bfloat16
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)

    def forward_loss(self, batch):
        with torch.autocast("cuda", dtype=self.dtype):
            return self.criterion(self.model(batch["x"]), batch["y"])

    def train_step(self, batch) -> float:
        loss = self.forward_loss(batch)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.item()
