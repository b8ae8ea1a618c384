import torch

DTYPE = "bfloat16"
PT_DTYPE = {"float16": torch.float16, "bfloat16": torch.bfloat16}[DTYPE]


def train(model, loader, optimizer):
    for x, y in loader:
        with torch.autocast("cuda", dtype=PT_DTYPE):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_cpu(model, loader, optimizer):
    for x, y in loader:
        with torch.autocast("cpu"):  # cpu autocast defaults to bfloat16
            loss = model(x).sum()
        loss.backward()
        optimizer.step()


def train_off(model, loader, optimizer):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=False):
            loss = model(x).sum()
        loss.backward()
        optimizer.step()
