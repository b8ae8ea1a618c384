#!/bin/bash
# Run from the project's root: `python -m` runs segmenter/train.py with these options
torchrun --nproc_per_node 8 -m segmenter.train --precision bf16-mixed
# Lightning rejects "fp16": reported at the Trainer's keyword, with this line as the related location
python -m segmenter.train --precision fp16
