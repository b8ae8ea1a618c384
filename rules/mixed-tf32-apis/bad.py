import torch

torch.backends.cuda.matmul.fp32_precision = "tf32"
torch.backends.cudnn.allow_tf32 = True
torch.set_float32_matmul_precision("high")


def log_settings():
    print(torch.backends.cuda.matmul.allow_tf32)
