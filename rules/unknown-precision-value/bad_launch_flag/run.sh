#!/bin/bash
python train.py --precision bf16-mixed
# Lightning rejects "fp16": reported at the Trainer's keyword, with this line as the related location
python train.py --precision fp16
