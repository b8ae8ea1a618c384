import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)


half = torch.nn.Linear(4, 4).cuda().half()  # inference copy
model = torch.nn.Linear(4, 4).cuda()
trainer = Trainer(model)
