# The engine's autocast over float32 parameters: no fp16 or bf16 block enabled beside it.
import deepspeed

ds_config = {
    "train_micro_batch_size_per_gpu": 1,
    "bf16": {"enabled": False},
    "torch_autocast": {"enabled": True, "dtype": "bfloat16"},
    "zero_optimization": {"stage": 2},
}
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
