from distutils.version import LooseVersion

import torch

# Every torch that warns (2.4 or newer) is at least 1.6: this branch is the one that runs, not a fallback.
# Reported without a fix: the uses of a name bound in a version switch are not followed.
if LooseVersion(torch.__version__) >= LooseVersion("1.6.0"):
    from torch.cuda.amp import autocast
else:
    from contextlib import nullcontext as autocast


def encode(model, batch):
    with autocast(enabled=False):
        return model(batch.float())
