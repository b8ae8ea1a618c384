# options.toml targets an A100 (compute capability 8.0): Transformer Engine refuses every FP8 recipe there.
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format

recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, amax_compute_algo="max")
with te.fp8_autocast(enabled=True, fp8_recipe=recipe):
    out = model(inp)
out.sum().backward()
