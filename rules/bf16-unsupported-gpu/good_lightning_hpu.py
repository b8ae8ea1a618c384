# A Trainer for Habana Gaudi (accelerator="hpu"): its bf16 does not run on the target GPUs.
from lightning.pytorch import Trainer

trainer = Trainer(accelerator="hpu", devices=8, precision="bf16-mixed")
