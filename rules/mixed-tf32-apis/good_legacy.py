import torch

# only the legacy API (fine on every version, deprecated in favour of fp32_precision)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.set_float32_matmul_precision("high")
