import torch

torch.set_float32_matmul_precision(args.matmul_precision)
torch.set_float32_matmul_precision("high")
