import bitsandbytes as bnb
import torch
from apex.optimizers import FusedAdam
from transformers import AdamW

model = torch.nn.Linear(4, 4).cuda().to(torch.bfloat16)
# each updates the bfloat16 weights in place: no float32 master copy
hf = AdamW(model.parameters(), lr=1e-4)
paged = bnb.optim.PagedAdamW8bit(model.parameters(), lr=1e-4)
fused = FusedAdam(model.parameters(), lr=1e-4)
