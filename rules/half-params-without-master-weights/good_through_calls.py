import torch


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.model.float()  # back to float32 before the optimizer sees it
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)


def make_optimizer(net):
    return torch.optim.SGD(net.parameters(), lr=1e-3)


teacher = torch.nn.Linear(4, 4).cuda().half()  # only evaluated, never optimized
student = torch.nn.Linear(4, 4).cuda()
trainer = Trainer(teacher, 1e-4)
optimizer = make_optimizer(student)
