import bitsandbytes as bnb
import torch
from apex.optimizers import FusedAdam

model = torch.nn.Linear(4, 4).cuda().half()
# apex keeps float32 master weights when asked
fused = FusedAdam(model.parameters(), lr=1e-4, master_weights=True)
# not an optimizer of bitsandbytes: its manager of per-parameter settings
manager = bnb.optim.GlobalOptimManager.get_instance()
# the float32 model is what the 8-bit optimizer updates
full = torch.nn.Linear(4, 4).cuda()
adam8 = bnb.optim.AdamW8bit(full.parameters(), lr=1e-4)
# handed to a wrapper that keeps float32 master weights after it is built
from apex.contrib.optimizers import FP16_Optimizer  # noqa: E402

wrapped = FusedAdam(model.parameters(), lr=1e-4)
wrapped = FP16_Optimizer(wrapped, dynamic_loss_scale=True)
