import bitsandbytes as bnb
import torch
from apex.optimizers import FusedAdam
from transformers.optimization import AdamW

model = torch.nn.Linear(4, 4).cuda().half()
# Transformers' AdamW defaults to eps=1e-6, above float16's smallest value
plain = AdamW(model.parameters(), lr=1e-4)
# bitsandbytes and apex keep their state in float32 and add eps in float32
paged = bnb.optim.PagedAdamW8bit(model.parameters(), lr=1e-4, eps=1e-10)
fused = FusedAdam(model.parameters(), lr=1e-4, eps=1e-12)
