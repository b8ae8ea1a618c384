"""Hands a model and its optimizer to DeepSpeed, as a training framework’s strategy does: the precision comes from
the user’s config, which this module never names…"""

import deepspeed
import torch


def setup(model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: dict):
    """DeepSpeed casts the model itself when the config enables fp16 or bf16, and keeps float32 master weights."""
    engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
    return engine, optimizer


def compute_dtype(config: dict) -> torch.dtype:
    if config.get("bf16", {}).get("enabled"):
        return torch.bfloat16
    if config.get("fp16", {}).get("enabled"):
        return torch.float16
    return torch.float32
