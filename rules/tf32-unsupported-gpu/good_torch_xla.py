# A TPU training script (torch_xla imported unconditionally, the XLA device the only one named): the float32
# matmul precision it asks for is the TPU's business, not the target GPUs'.
import torch
import torch_xla.core.xla_model as xm

torch.set_float32_matmul_precision("high")
device = xm.xla_device()
