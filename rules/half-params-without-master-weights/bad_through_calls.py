import torch


class Trainer:
    """The model reaches the optimizer through the constructor and `self.model`."""

    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)

    def step(self, batch):
        loss = self.model(batch).mean()
        loss.backward()
        self.optimizer.step()


def make_optimizer(net):
    # ... and through a function's parameter
    return torch.optim.SGD(net.parameters(), lr=1e-3)


model = torch.nn.Linear(4, 4).cuda().half()
trainer = Trainer(model, 1e-4)
optimizer = make_optimizer(model)
