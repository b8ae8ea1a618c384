# Branches that leave the function but train the cast weights first: still reported.
import torch


def main(args, model, data):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.pure_fp16:
        model.half()
        train(model, optimizer, data)  # the optimizer is passed on: it steps the float16 weights
        return
    train(model, optimizer, data)


def fine_tune(args, model, data):
    if args.pure_fp16:
        model.half()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in data:
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        return
