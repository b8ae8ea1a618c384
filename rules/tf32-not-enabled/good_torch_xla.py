"""A TPU training script: torch_xla is imported unconditionally, so it never runs on the target GPUs."""
import torch_xla.core.xla_model as xm
from lightning import Trainer

trainer = Trainer(precision="32-true", devices=8)
