# One Trainer for GPUs beside one for a TPU: only the TPU Trainer's precision is left alone.
from lightning.pytorch import Trainer

gpu_trainer = Trainer(accelerator="gpu", precision="bf16-mixed")
tpu_trainer = Trainer(accelerator="tpu", precision="bf16-true")
