#!/bin/bash
# The value is the cluster's to choose: unknown here.
TF32=${TF32:-False}
torchrun --nproc_per_node 8 train.py --output_dir out --tf32 $TF32
