"""Lightning owns backward and scaling, also with manual optimization."""
import lightning as L
import torch
from torch import nn


class GAN(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.automatic_optimization = False
        self.generator = nn.Linear(8, 8)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        with torch.autocast("cuda"):
            loss = self.generator(batch).pow(2).mean()
        self.manual_backward(loss)
        opt.step()
        opt.zero_grad()

    def on_before_optimizer_step(self, optimizer):
        # the gradients are unscaled here (inside opt.step()), not right after manual_backward
        self.clip_gradients(optimizer, gradient_clip_val=1.0)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=2e-4)


trainer = L.Trainer(precision="16-mixed", max_epochs=1)
trainer.fit(GAN())
