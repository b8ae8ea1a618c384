import torch
from torchao.optim import _AdamW
from transformers import AutoModelForCausalLM


def inference():
    # loaded in bf16 to generate: nothing trains it
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)
    return model.generate(max_new_tokens=8)


def fp32_master():
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.float32)
    return torch.optim.AdamW(model.parameters(), lr=1e-5)


def stochastic_rounding():
    # torchao's AdamW with bf16 stochastic rounding compensates for the missing float32 copy
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)
    return _AdamW(model.parameters(), lr=1e-5, bf16_stochastic_round=True)
