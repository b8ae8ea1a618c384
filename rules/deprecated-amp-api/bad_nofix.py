import torch
from torch.cuda.amp import autocast

# the names are passed around uncalled: which call needs "cuda" is not visible here
make_ctx = torch.cuda.amp.autocast
contexts = {"amp": autocast}
