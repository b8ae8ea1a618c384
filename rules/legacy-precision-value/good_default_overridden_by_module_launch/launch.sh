#!/usr/bin/env bash
# A src layout: the package is installed, `-m` finds src/segmenter/train.py
accelerate launch --num_processes 4 -m segmenter.train --precision bf16-mixed
deepspeed --num_gpus 8 --module segmenter.train --precision=16-mixed
python -u -m segmenter.train --precision 32-true
# Another package's module (not this project's): starts no script of the project
python -m segmentation_tools.train
