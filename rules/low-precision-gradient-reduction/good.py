import torch
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
fully_shard(other, mp_policy=MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32))
optimizer = torch.optim.AdamW(model.parameters())
