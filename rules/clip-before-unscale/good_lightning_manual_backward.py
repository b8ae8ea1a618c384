import lightning as L
import torch


class Generator(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.net = torch.nn.Linear(4, 4)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = self.net(batch).mean()
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()

    def on_before_optimizer_step(self, optimizer):
        # Lightning calls this hook inside opt.step(), after unscaling the gradients
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters())


trainer = L.Trainer(precision="16-mixed", max_epochs=1)
trainer.fit(Generator())
