# The cast is in a branch that returns without stepping the optimizer or passing it on: the weights the
# optimizer updates in the training loop below stay float32. (The shape of NVIDIA's DLRM main.py.)
import torch


def main(args, model, data):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.mode == "inference_benchmark":
        if args.amp:
            model = model.half()  # pure fp16 for inference
        benchmark(model, data)
        return
    for x, y in data:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
