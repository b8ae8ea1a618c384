# torch_xla is only an optional path here (imported under a test) and the script also runs on CUDA: the
# bfloat16 autocast can run on the target GPUs, so it is still reported.
import torch

try:
    import torch_xla.core.xla_model as xm
except ImportError:
    xm = None

device = xm.xla_device() if xm is not None else torch.device("cuda")
model = torch.nn.Linear(8, 8).to(device)
optimizer = torch.optim.AdamW(model.parameters())


def train_step(batch):
    with torch.autocast(device.type, dtype=torch.bfloat16):
        loss = model(batch).square().mean()
    loss.backward()
    optimizer.step()
