# Nothing in this file trains: float16 inference keeps more mantissa bits than bfloat16, and there is no loss to
# scale, so float16 on a GPU with native bf16 is not a mistake here.
import torch


@torch.no_grad()
def generate(pipeline, prompts):
    with torch.autocast("cuda"):
        return [pipeline(p) for p in prompts]
