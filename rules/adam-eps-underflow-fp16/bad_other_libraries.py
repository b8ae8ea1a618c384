import torch
from transformers import AdamW

model = torch.nn.Linear(4, 4).cuda().half()
# Transformers' own AdamW divides in the parameters' dtype, like torch's: eps=1e-8 rounds to 0 in float16
optimizer = AdamW(model.parameters(), lr=1e-4, eps=1e-8)
