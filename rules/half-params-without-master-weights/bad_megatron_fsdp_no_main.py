# main_params_dtype=None: Megatron-FSDP makes the bfloat16 compute weights the main weights.
import torch
from megatron.core.distributed.fsdp.src.megatron_fsdp.experimental import fully_shard, fully_shard_optimizer
from megatron.core.distributed.fsdp.src.megatron_fsdp.mixed_precision import MixedPrecisionPolicy

model = TinyModel().to(device="cuda", dtype=torch.bfloat16)
policy = MixedPrecisionPolicy(main_params_dtype=None)
fully_shard(model, mesh=mesh, mp_policy=policy)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
fully_shard_optimizer(optimizer)
for batch in loader:
    model(batch).sum().backward()
    optimizer.step()
