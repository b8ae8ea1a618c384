#!/bin/bash
set -e
CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train.py \
    --max-epochs 20 \
    --precision bf16-mixed
