"""float16 autocast for evaluation only: nothing is backpropagated through it."""
import torch


@torch.inference_mode()
def evaluate(model, loader) -> float:
    correct = 0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x)
        correct += (logits.argmax(-1) == y).sum().item()
    return correct


def train_fp32(model, loader, optimizer) -> None:
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).sum()  # an fp16 probe after training; not backpropagated
    print(loss.item())
