# A trainer whose float8 compute is an opt-in (unsloth's diffusion trainer): the config is built in a helper
# that the file calls only when the run's setting asks for fp8 (`mode == "fp8" and ...`).
import torch
from torchao.float8 import Float8LinearConfig, convert_to_float8_training


def _fp8_training_config():
    try:
        return Float8LinearConfig.from_recipe_name("rowwise")
    except Exception:
        return Float8LinearConfig(pad_inner_dim=True)


def _apply_fp8_training(model) -> bool:
    try:
        convert_to_float8_training(model, config=_fp8_training_config())
        return True
    except Exception:
        return False


def train(model, batches, base_precision: str):
    if base_precision == "fp8" and not _apply_fp8_training(model):
        base_precision = "bf16"
    optimizer = torch.optim.AdamW(model.parameters())
    for batch in batches:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
