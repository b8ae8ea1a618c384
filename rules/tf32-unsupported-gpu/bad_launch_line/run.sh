#!/bin/bash
# train.py parses its command line into TrainingArguments: --tf32 True is TrainingArguments(tf32=True).
deepspeed --num_gpus 8 train.py \
    --output_dir out \
    --bf16 True \
    --tf32 True
