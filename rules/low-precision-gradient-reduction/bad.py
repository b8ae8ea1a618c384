import torch
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))
fully_shard(other, mp_policy=MixedPrecisionPolicy(torch.bfloat16, torch.bfloat16))
optimizer = torch.optim.AdamW(model.parameters())
