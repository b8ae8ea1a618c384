import torch
from torch.nn.utils import clip_grad_value_


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.opt = optimizer
        self.grad_scaler = torch.amp.GradScaler("cuda")

    def step(self, loss, clip_value, unscale_first):
        self.grad_scaler.scale(loss).backward()
        if unscale_first:
            self.grad_scaler.unscale_(self.opt)
        # on the path where unscale_first is False, clipping sees scaled gradients
        if clip_value:
            clip_grad_value_(self.model.parameters(), clip_value)
        self.grad_scaler.step(self.opt)
        self.grad_scaler.update()
