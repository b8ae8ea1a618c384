#!/bin/bash
# An Ascend NPU launcher (its runtime's environment), beside the GPU ones: it never runs on the target GPUs.
export TASK_QUEUE_ENABLE=0
export HCCL_OP_BASE_FFTS_MODE_ENABLE=TRUE
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True

accelerate launch --mixed_precision bf16 train.py
