#!/bin/bash
# Megatron-LM builds NVFP4BlockScaling() with its defaults for --fp4-format: random Hadamard transform and
# stochastic rounding on, which Transformer Engine before 2.19 does not train on a GB10 (compute capability 12.1).
torchrun --nproc_per_node 1 pretrain_gpt.py \
    --bf16 \
    --fp4-format e2m1 \
    --num-layers 16 \
    --num-experts 8
