# Megatron-FSDP's fully_shard keeps float32 main weights (MixedPrecisionPolicy.main_params_dtype defaults to
# torch.float32) and fully_shard_optimizer steps them: the bfloat16 model is only the compute copy.
import torch
from megatron.core.distributed.fsdp.src.megatron_fsdp.experimental import fully_shard, fully_shard_optimizer

model = TinyModel().to(device="cuda", dtype=torch.bfloat16)
fully_shard(model.fc1, mesh=mesh)
fully_shard(model.fc2, mesh=mesh)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
fully_shard_optimizer(optimizer)
for batch in loader:
    model(batch).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
