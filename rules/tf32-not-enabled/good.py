import lightning as L
import torch

torch.set_float32_matmul_precision("high")
trainer = L.Trainer(accelerator="gpu", precision="32-true")
