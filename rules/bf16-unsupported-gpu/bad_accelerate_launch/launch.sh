#!/bin/bash
# The launcher's --mixed_precision reaches Accelerator() in train.py, which does not choose its own.
accelerate launch --num_processes 2 --mixed_precision bf16 train.py
# The script's own --mixed_precision option, handed to Accelerator(mixed_precision=...).
accelerate launch diffusion.py --mixed_precision="bf16"
# Here the script's option is not given: its default (None) leaves the choice to the launcher's flag.
accelerate launch --mixed_precision bf16 diffusion.py
