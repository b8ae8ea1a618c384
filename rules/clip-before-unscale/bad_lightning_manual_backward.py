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
        # still scaled: Lightning unscales inside opt.step(), after this clip
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
        opt.step()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters())


class Critic(Generator):
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = self.net(batch).mean()
        opt.zero_grad()
        self.manual_backward(loss)
        # Lightning's own clip does not unscale in manual optimization either
        self.clip_gradients(opt, gradient_clip_val=0.5, gradient_clip_algorithm="norm")
        opt.step()


trainer = L.Trainer(precision="16-mixed", max_epochs=1)
trainer.fit(Generator())
trainer.fit(Critic())
