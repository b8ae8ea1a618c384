# The DeepSpeed config as a dict literal handed to deepspeed.initialize: no DeepSpeed version is declared.
import deepspeed

ds_config = {
    "train_micro_batch_size_per_gpu": 1,
    "bf16": {"enabled": True},
    "torch_autocast": {"enabled": True, "dtype": "bfloat16"},
    "zero_optimization": {"stage": 2},
}
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
for batch in loader:
    loss = engine(batch)
    engine.backward(loss)
    engine.step()
