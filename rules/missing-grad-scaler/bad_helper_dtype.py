import torch


def autocast_dtype():
    # the helper of this module that picks the training dtype
    return torch.float16


model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters())
for step in range(10):
    with torch.autocast("cuda", dtype=autocast_dtype()):
        loss = model(torch.randn(8, 4, device="cuda")).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
