#!/bin/bash
# Megatron-LM FP8 training: --fp8-format without --fp8-recipe builds Transformer Engine's DelayedScaling.
GPT_ARGS=(
    --num-layers 32
    --hidden-size 4096
    --bf16
    --fp8-format hybrid
    --fp8-amax-history-len 1024
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${GPT_ARGS[@]}" --data-path $DATA
