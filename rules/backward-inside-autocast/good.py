import torch


def train(model, loader, optimizer):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            with torch.autocast("cuda", enabled=False):
                penalty = model.regularizer()
                penalty.backward(retain_graph=True)  # autocast is off here
        loss.backward()
        optimizer.step()


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ctx.save_for_backward(x)
            return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def closure_defined_inside(model, x, optimizer):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        def closure():
            loss = model(x).sum()
            loss.backward()
            return loss
    optimizer.step(closure)
