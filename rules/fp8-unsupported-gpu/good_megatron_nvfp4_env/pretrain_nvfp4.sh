#!/bin/bash
# Transformer Engine reads these when Megatron-LM builds NVFP4BlockScaling(): what 12.x trains.
export NVTE_NVFP4_DISABLE_RHT=1
export NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1
torchrun --nproc_per_node 1 pretrain_gpt.py \
    --bf16 \
    --fp4-format e2m1 \
    --num-layers 16
