import torch
from torchao.float8 import Float8LinearConfig, convert_to_float8_training

model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.Linear(4096, 4096)).cuda().bfloat16()
convert_to_float8_training(model, config=Float8LinearConfig())  # no torch.compile anywhere: eager casts
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

for _ in range(10):
    x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    loss = model(x).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
