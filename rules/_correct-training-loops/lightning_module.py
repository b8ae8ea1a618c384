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
        self.clip_gradients(opt, gradient_clip_val=1.0)
        opt.step()
        opt.zero_grad()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=2e-4)


trainer = L.Trainer(precision="16-mixed", max_epochs=1)
trainer.fit(GAN())
