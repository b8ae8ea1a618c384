# open_clip's precision helper (as EVA-CLIP copies it): 'amp' hands out torch.cuda.amp.autocast itself, which
# the caller enters with CUDA's default, float16; 'amp_bf16' a bfloat16 autocast. Both 16-bit types are
# offered, and which runs is chosen by the --precision flag: the bfloat16 arm is not reported.
import torch
from contextlib import suppress


def get_autocast(precision):
    if precision == "amp":
        return torch.cuda.amp.autocast
    elif precision == "amp_bfloat16" or precision == "amp_bf16":
        return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)
    else:
        return suppress
