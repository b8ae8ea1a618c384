#!/bin/bash
# The same NPU environment; the script's own option is given the precision (values reported at its keyword).
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
accelerate launch diffusion.py --mixed_precision="bf16"
