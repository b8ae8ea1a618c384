import torch

torch.set_float32_matmul_precision("highest")
